//! [`GpuBackend`]: the [`Backend`] of the GPU, and its device-resident batch.

use std::num::NonZeroUsize;
use std::ops::Range;

use axion_model::{Backend, Control, Model, RunTotals, State, StepError, StepReport, StepStats};
use wgpu::util::DeviceExt;

use crate::context::{AdapterReport, GpuContext};
use crate::error::GpuError;
use crate::layout::*;
use crate::step::{self, Packed, Params};

mod probe;
pub use probe::{
    ContactSlotProbe, Detection, LimitProbe, ProbeIterate, RowLinearization, RowProbe, TreeProbe,
};

/// Newton settings of the GPU backend. The tolerances are those f32 arithmetic can
/// reach on the canonical scenes (see `docs/gpu.md`); the CPU's are 1e-10 and below.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuSettings {
    /// Most Newton iterations per step.
    pub max_iterations: usize,
    /// Most linear-solver iterations per Newton iteration, where the Newton system is
    /// solved by the Krylov method (not along the tree: `tree_solve`). The conjugate
    /// residual restarts from its best iterate with the true residual every 20 iterations; more
    /// than about 40 iterations in f32 give worse Newton directions on boxes resting on
    /// four corners (measured on the 10-box pyramid over 50 steps: with 40, every step
    /// converged; with 200, 26 with restarts and 1 without; `docs/gpu.md`).
    pub max_linear_iterations: usize,
    /// The conjugate residual stops at $\lVert r\rVert \le$ this $\times \lVert b\rVert$.
    pub linear_tolerance: f64,
    /// Converged when the dynamics and drive residuals are below this (m/s; the
    /// dynamics residual below this or its f32 rounding floor, four unit roundoffs times
    /// the size of its terms, docs/gpu.md, "f32 tolerances") …
    pub velocity_tolerance: f64,
    /// … and every joint error $|c + \varepsilon\lambda|$ is below this (m or rad).
    pub position_tolerance: f64,
    /// Most step halvings of the line search per iteration.
    pub max_backtracks: usize,
    /// Relative diagonal $\delta_i = $ this $\times\thinspace w_i$ added to the Schur matrix
    /// (changes the iterates, not the solution).
    pub regularization: f64,
    /// Speculative contact margin (m): contacts are found at the start of a step where
    /// the gap is below this plus two steps of the fastest body's speed (as on the CPU).
    pub contact_margin: f64,
    /// Converged when every contact's normal residual $\lvert\phi\rvert/h$ and friction
    /// residual $\lvert h_f\rvert/\hat\rho$ is below this (m/s).
    pub contact_tolerance: f64,
    /// Put the rows' geometric stiffness on each body's own block of the Newton matrix.
    /// Leave on: measured over 1 s on lavapipe, without it the pendulum converges in
    /// 94/100 steps at h = 0.01 and 9/20 at h = 0.05, the 20-link chain in 15/20 at
    /// h = 0.05 and a 10 kg bob on five 0.1 kg links in 0/20 at h = 0.05 (with it:
    /// every step, 2–4 iterations on average).
    pub geometric_stiffness: bool,
    /// Keep the slip force's dependence on the normal force,
    /// $\Delta\hat\lambda_{\hat y} = R - \hat y\cdot\hat\lambda + \mu\Delta\lambda_n$, in the Newton
    /// step (the CPU's semismooth step has it; the symmetric friction form of
    /// docs/constraints.md lags it one iterate). The Schur system is then not symmetric
    /// and every world of a model with contacts or joint limits solves it by ORTHOMIN(2)
    /// (joint-only models keep the conjugate residual); a world whose coupled iteration
    /// stalls restarts the step with the coupling lagged. **On by default** (since
    /// 2026-11-24). Measured on lavapipe (docs/gpu.md): it brings the flat landings of
    /// capsules (h = 0.05) and cylinders (h = 0.01) and the skid-steer at h = 0.01 to
    /// every step converged, where the lagged form left steps at the iteration cap; every
    /// contact scene of the tests converges at least as often with it. It was off while
    /// the stack of 10 boxes converged in 2/100 steps with it, a figure since traced to
    /// lavapipe's loop budget.
    pub slip_coupling: bool,
    /// Creep $c$ of sticking friction (dimensionless, `≥ 0`), as the CPU's
    /// `SolverSettings::friction_creep`: a sticking contact slips at
    /// $c\thinspace\lambda_t/\rho$, $c$ times the velocity change its friction force
    /// causes in one step, which makes the forces of redundant sticking contacts unique.
    /// Default 1e-4, where the CPU's is 1e-6: in f32 a creep of 1e-6 is below the
    /// rounding of the friction rows, and the sticking feet of a robot leave the Newton
    /// iteration without a unique solution to converge to. Measured on lavapipe (drops
    /// of 50 steps, one world, h = 0.01, docs/gpu.md): with 1e-6 and no second attempt
    /// the five-link pendulum (pybullet_data's `pendulum5.urdf`) converged 9 steps and
    /// the a1 47; with the second attempt every step converged, at 1.1–2.5 times the
    /// iterations of 1e-4.
    pub friction_creep: f64,
    /// Solve the Newton system directly along the model's tree of bodies (`crate::tree`)
    /// where every row lies on it — joints between two dynamic bodies without loops,
    /// contacts and joints of one dynamic body with static ones: a robot on the ground
    /// without self-collision. The direction is then exact up to f32 rounding, with
    /// every block of the joints' and drives' geometric stiffness, in two sweeps over the
    /// bodies; the Krylov solve needed up to `max_linear_iterations` and gave worse
    /// directions (a1's drop on lavapipe: 72 % of steps converged with the Krylov solve,
    /// every step along the tree).
    /// **On by default.** Models with rows off the tree (contacts between two dynamic
    /// bodies, loops), a Newton iteration whose factorization fails (a singular block),
    /// a lagged slip coupling (`slip_coupling` off, or a world whose coupled iteration
    /// stalled), and on an adapter with a loop budget
    /// (lavapipe) a model whose factorization would not fit in one kernel invocation's
    /// budget, use the Krylov solve.
    pub tree_solve: bool,
    /// A step with contacts or joint limits that does not converge in `max_iterations`
    /// is solved once more from its start, with zero contact and limit forces and this
    /// friction creep, for as many iterations more, and kept if it converges (the CPU's
    /// last attempt before it splits a step: `SolverSettings::fallback_creep`,
    /// docs/step.md, "A step solved again"); otherwise the first attempt's best iterate
    /// is kept. A value not above `friction_creep` never solves a step again. Default
    /// 1e-3, ten times the creep. Measured on lavapipe (drops of 50 steps, one world):
    /// without it the aliengo converged 49 steps, with it 50.
    pub fallback_creep: f64,
    /// Most worlds per chunk. A batch is split into the fewest chunks this and the
    /// adapter allow, of equal size (within one world), each with its own buffers and
    /// dispatches; `None` makes the chunks as large as the adapter binds (lavapipe
    /// binds 128 MiB per buffer: about 660 worlds of the 10-box pyramid). Set it to
    /// bound the memory of one buffer. Chunking does not change any world's result:
    /// worlds are independent and bitwise reproducible.
    pub max_chunk_worlds: Option<NonZeroUsize>,
}

impl GpuSettings {
    /// Attempts at a step: 2 with a retry (`fallback_creep` above the creep), else 1.
    pub fn attempts(&self) -> usize {
        if self.fallback_creep > self.friction_creep {
            2
        } else {
            1
        }
    }
}

impl Default for GpuSettings {
    fn default() -> Self {
        Self {
            max_iterations: 30,
            max_linear_iterations: 40,
            linear_tolerance: 1e-5,
            velocity_tolerance: 1e-4,
            position_tolerance: 2e-6,
            max_backtracks: 8,
            regularization: 1e-6,
            contact_margin: 0.02,
            contact_tolerance: 1e-4,
            geometric_stiffness: true,
            slip_coupling: true,
            friction_creep: 1e-4,
            tree_solve: true,
            fallback_creep: 1e-3,
            max_chunk_worlds: None,
        }
    }
}

/// Buffers of one model and batch size on the device.
struct Batch {
    /// [`Model::id`] of the model packed.
    model: u64,
    packed: Packed,
    worlds: usize,
    /// `step_direction_more` dispatches per Newton iteration.
    continuations: usize,
    /// The batch's worlds in chunks, in order.
    chunks: Vec<Chunk>,
    /// The host state last written to or read from the device, and the device time.
    synced: Option<State>,
    time: f64,
}

/// The buffers of the worlds `worlds` of a batch, stepped by their own dispatches. In
/// each buffer, slot `s` of the chunk's `k`-th world is element `s * worlds.len() + k`.
struct Chunk {
    worlds: Range<usize>,
    uniform: wgpu::Buffer,
    state: wgpu::Buffer,
    control: wgpu::Buffer,
    stats: wgpu::Buffer,
    scratch: wgpu::Buffer,
    bind: wgpu::BindGroup,
    /// The indirect dispatch arguments of the Newton iterations, written by the kernels
    /// (`next_dispatch` in `step.wgsl`): iteration `k` is dispatched with triple `k`
    /// of buffer `k % 2`, while its kernels write iteration `k + 1`'s into the other
    /// (one buffer cannot be a dispatch's arguments and its writable storage at once).
    /// Its `j`-th `step_direction_more` (of `c` per iteration) has triple
    /// `n + k c + j − 1` of buffer `(k + j) % 2` (`n` the iterations recorded,
    /// `max_iterations` times [`GpuSettings::attempts`]), written by the dispatch before
    /// it into that buffer while it reads the other.
    dispatch: [wgpu::Buffer; 2],
    /// Group 1 with `dispatch[i]`.
    writes: [wgpu::BindGroup; 2],
}

impl Chunk {
    /// Records one step: `step_begin`, then each of `iterations` Newton iterations
    /// (`step_factor`, `step_direction`, `more` times `step_direction_more`, `step_update`,
    /// `step_search`) with the workgroups its active worlds asked for (none once every
    /// world has stopped; a continuation, those whose linear solve went on), then
    /// `step_finish`.
    fn record_step(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        p: &Pipelines,
        iterations: usize,
        more: usize,
    ) {
        let groups = self.groups();
        pass.set_bind_group(0, &self.bind, &[]);
        pass.set_bind_group(1, &self.writes[0], &[]);
        pass.set_pipeline(&p.begin);
        pass.dispatch_workgroups(groups, 1, 1);
        for k in 0..iterations {
            pass.set_bind_group(1, &self.writes[(k + 1) % 2], &[]);
            for pipeline in [&p.factor, &p.direction] {
                pass.set_pipeline(pipeline);
                pass.dispatch_workgroups_indirect(&self.dispatch[k % 2], 12 * k as u64);
            }
            if more > 0 {
                pass.set_pipeline(&p.direction_more);
            }
            for j in 1..=more {
                let triple = iterations + k * more + j - 1;
                pass.set_bind_group(1, &self.writes[(k + j + 1) % 2], &[]);
                pass.dispatch_workgroups_indirect(&self.dispatch[(k + j) % 2], 12 * triple as u64);
            }
            pass.set_bind_group(1, &self.writes[(k + 1) % 2], &[]);
            for pipeline in [&p.update, &p.search] {
                pass.set_pipeline(pipeline);
                pass.dispatch_workgroups_indirect(&self.dispatch[k % 2], 12 * k as u64);
            }
        }
        pass.set_pipeline(&p.finish);
        pass.dispatch_workgroups(groups, 1, 1);
    }

    /// Workgroups of one dispatch over all of the chunk's worlds.
    fn groups(&self) -> u32 {
        self.worlds.len().div_ceil(WORKGROUP as usize) as u32
    }

    /// The chunk's contents of `buffer`, which holds `slots` numbers per world.
    fn read(
        &self,
        ctx: &GpuContext,
        buffer: &wgpu::Buffer,
        slots: usize,
    ) -> Result<Vec<f32>, GpuError> {
        let raw = ctx.read_back(buffer, (slots.max(1) * self.worlds.len() * 4) as u64)?;
        Ok(bytemuck::pod_collect_to_vec(&raw))
    }
}

/// `worlds` split into the fewest chunks of at most `most` worlds, of equal sizes
/// where they divide evenly, else the first ones one world larger.
fn split(worlds: usize, most: usize) -> Vec<Range<usize>> {
    let count = worlds.div_ceil(most.max(1));
    let mut start = 0;
    (0..count)
        .map(|i| {
            let len = worlds / count + usize::from(i < worlds % count);
            start += len;
            start - len..start
        })
        .collect()
}

/// The GPU backend: every world of a batch stepped by the same kernel dispatches (one
/// invocation per world; a batch beyond the adapter's buffer limits in chunks), state
/// kept on the device between steps.
///
/// Use it through [`Backend::step`] (uploads the state if the host changed it, steps,
/// reads back), or keep the state on the device with [`GpuBackend::upload`],
/// [`GpuBackend::advance`] and [`GpuBackend::download`].
pub struct GpuBackend {
    ctx: GpuContext,
    settings: GpuSettings,
    layout: wgpu::BindGroupLayout,
    /// Group 1 of the kernels: the Newton iterations' dispatch arguments they write.
    dispatch_layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    module: wgpu::ShaderModule,
    /// The kernels compiled without and with the contact code (the `CONTACTS` pipeline
    /// constant of `step.wgsl`), each on first use.
    pipelines: [Option<Pipelines>; 2],
    batch: Option<Batch>,
}

/// The kernels of a step (see `step.wgsl`).
struct Pipelines {
    begin: wgpu::ComputePipeline,
    factor: wgpu::ComputePipeline,
    direction: wgpu::ComputePipeline,
    direction_more: wgpu::ComputePipeline,
    update: wgpu::ComputePipeline,
    search: wgpu::ComputePipeline,
    finish: wgpu::ComputePipeline,
}

impl GpuBackend {
    /// Finds an adapter and loads the step module (its kernels are compiled for the
    /// first model stepped: with or without the contact code).
    pub fn new(settings: GpuSettings) -> Result<Self, GpuError> {
        let ctx = GpuContext::new()?;
        let (layout, dispatch_layout, pipeline_layout, module) = ctx.checked(|ctx| {
            let device = ctx.device();
            let buffer = |binding, ty| wgpu::BindGroupLayoutEntry {
                binding,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            };
            let storage = |read_only| wgpu::BufferBindingType::Storage { read_only };
            let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("axion step"),
                entries: &[
                    buffer(0, wgpu::BufferBindingType::Uniform),
                    buffer(1, storage(true)),
                    buffer(2, storage(true)),
                    buffer(3, storage(false)),
                    buffer(4, storage(true)),
                    buffer(5, storage(false)),
                    buffer(6, storage(false)),
                ],
            });
            let dispatch_layout =
                device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                    label: Some("axion dispatch"),
                    entries: &[buffer(0, storage(false))],
                });
            let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("axion step"),
                bind_group_layouts: &[Some(&layout), Some(&dispatch_layout)],
                immediate_size: 0,
            });
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("axion step"),
                source: wgpu::ShaderSource::Wgsl(step::step_source().into()),
            });
            (layout, dispatch_layout, pipeline_layout, module)
        })?;
        Ok(Self {
            ctx,
            settings,
            layout,
            dispatch_layout,
            pipeline_layout,
            module,
            pipelines: [None, None],
            batch: None,
        })
    }

    /// Compiles the kernels for a model with (`contacts`) or without unilateral rows
    /// (contact pairs, joint limits), once.
    fn compile(&mut self, contacts: bool) -> Result<(), GpuError> {
        let slot = usize::from(contacts);
        if self.pipelines[slot].is_some() {
            return Ok(());
        }
        let pipelines = self.ctx.checked(|_| Pipelines {
            begin: self.create_pipeline(contacts, "step_begin"),
            factor: self.create_pipeline(contacts, "step_factor"),
            direction: self.create_pipeline(contacts, "step_direction"),
            direction_more: self.create_pipeline(contacts, "step_direction_more"),
            update: self.create_pipeline(contacts, "step_update"),
            search: self.create_pipeline(contacts, "step_search"),
            finish: self.create_pipeline(contacts, "step_finish"),
        })?;
        self.pipelines[slot] = Some(pipelines);
        Ok(())
    }

    /// The kernel `entry` of the step module, for a model with (`contacts`) or without
    /// unilateral rows; call inside [`GpuContext::checked`].
    fn create_pipeline(&self, contacts: bool, entry: &str) -> wgpu::ComputePipeline {
        let constants = [
            ("CONTACTS", if contacts { 1.0 } else { 0.0 }),
            // Joint-only models have no friction to couple: they keep the conjugate
            // residual.
            (
                "SLIP_COUPLING",
                if self.settings.slip_coupling && contacts {
                    1.0
                } else {
                    0.0
                },
            ),
        ];
        self.ctx
            .device()
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: Some(&self.pipeline_layout),
                module: &self.module,
                entry_point: Some(entry),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &constants,
                    ..Default::default()
                },
                cache: None,
            })
    }

    /// Runs the kernel `entry` of the step module once on the batch, compiled for this
    /// call (the probes of the tests, `probe.rs`).
    fn run_probe(&self, entry: &str) -> Result<(), GpuError> {
        let batch = self.batch()?;
        let contacts = batch.packed.unilateral();
        self.ctx.checked(|ctx| {
            let pipeline = self.create_pipeline(contacts, entry);
            let mut encoder = ctx.device().create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                pass.set_pipeline(&pipeline);
                for chunk in &batch.chunks {
                    pass.set_bind_group(0, &chunk.bind, &[]);
                    pass.set_bind_group(1, &chunk.writes[0], &[]);
                    pass.dispatch_workgroups(chunk.groups(), 1, 1);
                }
            }
            ctx.queue().submit([encoder.finish()]);
        })
    }
}

/// The kernels compiled for a packed model (see [`GpuBackend::compile`]).
fn kernels<'a>(
    pipelines: &'a [Option<Pipelines>; 2],
    packed: &Packed,
) -> Result<&'a Pipelines, GpuError> {
    pipelines[usize::from(packed.unilateral())]
        .as_ref()
        .ok_or_else(|| GpuError::Operation {
            reason: "the step kernels are not compiled".into(),
        })
}

impl GpuBackend {
    /// A backend for `worlds` copies of `model`: refuses a model the GPU cannot run
    /// ([`GpuError::UnsupportedModel`]) or a batch beyond the adapter's limits now,
    /// not at the first step.
    pub fn for_model(
        model: &Model,
        worlds: usize,
        settings: GpuSettings,
    ) -> Result<Self, GpuError> {
        step::check_supported(model)?;
        let mut backend = Self::new(settings)?;
        backend.prepare(model, worlds)?;
        Ok(backend)
    }

    /// The adapter the kernels run on.
    pub fn adapter(&self) -> &AdapterReport {
        self.ctx.adapter()
    }

    /// The settings.
    pub fn settings(&self) -> &GpuSettings {
        &self.settings
    }

    /// Packs `model` and allocates the buffers for it and `worlds`, unless they are
    /// there already: for the same build of the model ([`Model::id`]) and as many
    /// worlds, nothing is done (the model is packed once, not every step); another
    /// build that packs the same keeps the buffers too.
    fn prepare(&mut self, model: &Model, worlds: usize) -> Result<(), GpuError> {
        if let Some(b) = &self.batch
            && b.worlds == worlds
            && b.model == model.id()
        {
            return Ok(());
        }
        let packed = step::pack(model)?;
        self.compile(packed.unilateral())?;
        if let Some(b) = &mut self.batch
            && b.packed == packed
            && b.worlds == worlds
        {
            b.model = model.id();
            return Ok(());
        }
        self.batch = None;
        let limits = self.ctx.limits();
        let max_binding = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        let per_world = 4 * packed
            .scratch_slots()
            .max(packed.state_slots())
            .max(packed.control_slots())
            .max(STATS) as u64;
        if per_world > max_binding {
            return Err(GpuError::TooLarge {
                reason: format!(
                    "one world needs {per_world} bytes of scratch per buffer, the adapter binds at most {max_binding}"
                ),
            });
        }
        let most = (max_binding / per_world)
            .min(u64::from(limits.max_compute_workgroups_per_dimension) * u64::from(WORKGROUP))
            .min(
                self.settings
                    .max_chunk_worlds
                    .map_or(u64::MAX, |n| n.get() as u64),
            );
        let chunks = split(worlds, most as usize);
        let s = &self.settings;
        let budget = !self.ctx.adapter().is_hardware();
        // The lagged slip coupling is a fixed-point iteration on the slip force that the
        // exact steps along the tree overshoot (docs/gpu.md): its models keep the Krylov
        // solve.
        let lagged = packed.unilateral() && !s.slip_coupling;
        let tree = s.tree_solve && !lagged && packed.tree_fits(budget);
        let linear_chunk = packed.linear_chunk(budget, s.max_linear_iterations);
        // `step_direction` runs `linear_chunk` linear iterations, each of the
        // continuations as many more; the cap and the pass that ends the solve need
        // `max_linear_iterations + 1` in all (`continuations()` in step_linear.wgsl).
        let continuations = (s.max_linear_iterations + 1).div_ceil(linear_chunk) - 1;
        let params = Params {
            worlds: 0,
            bodies: packed.bodies as u32,
            joints: packed.joints as u32,
            drives: packed.drives as u32,
            rows: packed.rows as u32,
            joint_rows: packed.joint_rows as u32,
            max_newton: s.max_iterations as u32,
            max_linear: s.max_linear_iterations as u32,
            max_backtracks: s.max_backtracks as u32,
            geometric_stiffness: u32::from(s.geometric_stiffness),
            drive_base_u: packed.drive_base_u as u32,
            rowbody_base_u: packed.rowbody_base_u as u32,
            adj_offset_base_u: packed.adj_offset_base_u as u32,
            adj_base_u: packed.adj_base_u as u32,
            joint_base_f: packed.joint_base_f as u32,
            scratch_slots: packed.scratch_slots() as u32,
            pairs: packed.pairs as u32,
            pair_base_u: packed.pair_base_u as u32,
            pair_base_f: packed.pair_base_f as u32,
            contact_row0: packed.contact_row0() as u32,
            h: 0.0,
            velocity_tolerance: s.velocity_tolerance as f32,
            position_tolerance: s.position_tolerance as f32,
            linear_tolerance: s.linear_tolerance as f32,
            gravity: packed.gravity,
            regularization: s.regularization as f32,
            contact_margin: s.contact_margin as f32,
            contact_tolerance: s.contact_tolerance as f32,
            fb_eps_sq: axion_constraints::contact::DEFAULT_FB_EPS_SQ as f32,
            linear_chunk: linear_chunk as u32,
            limits: [
                packed.limits as u32,
                packed.limit_base_u as u32,
                packed.limit_base_f as u32,
                packed.limit_row0() as u32,
            ],
            friction_creep: s.friction_creep as f32,
            fallback_creep: s.fallback_creep as f32,
            attempts: s.attempts() as u32,
            pad0: 0,
            tree: [
                if tree {
                    packed.tree.bodies.len() as u32
                } else {
                    0
                },
                packed.tree.groups.len() as u32,
                packed.tree_base_u[0] as u32,
                packed.tree_base_u[1] as u32,
            ],
            tree_more: [
                packed.tree_base_u[2] as u32,
                packed.tree_base_u[3] as u32,
                packed.tree.floats as u32,
                u32::from(packed.tree_refined(budget)),
            ],
        };
        let (layout, dispatch_layout) = (&self.layout, &self.dispatch_layout);
        // One triple per Newton iteration and one per continuation of each.
        let dispatch_bytes =
            12 * (s.max_iterations * s.attempts() * (1 + continuations)).max(1) as u64;
        let batch = self.ctx.checked(|ctx| {
            let device = ctx.device();
            let storage = wgpu::BufferUsages::STORAGE;
            let copy = wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
            let init = |label, contents: &[u8], usage| {
                device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(label),
                    contents,
                    usage,
                })
            };
            // Empty arrays are padded to one element (bindings cannot be empty).
            let mut model_f = packed.model_f.clone();
            model_f.push(0.0);
            let mut model_u = packed.model_u.clone();
            model_u.push(0);
            let model_f = init("model f32", bytemuck::cast_slice(&model_f), storage);
            let model_u = init("model u32", bytemuck::cast_slice(&model_u), storage);
            let chunk = |worlds: Range<usize>| {
                let n = worlds.len();
                let empty = |label, slots: usize| {
                    device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some(label),
                        size: (slots.max(1) * n * 4) as u64,
                        usage: storage | copy,
                        mapped_at_creation: false,
                    })
                };
                let mut params = params;
                params.worlds = n as u32;
                let uniform = init(
                    "params",
                    bytemuck::bytes_of(&params),
                    wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                );
                let state = empty("state", packed.state_slots());
                let control = empty("control", packed.control_slots());
                let scratch = empty("scratch", packed.scratch_slots());
                let stats = empty("stats", STATS);
                let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("axion step"),
                    layout,
                    entries: &[
                        &uniform, &model_f, &model_u, &state, &control, &scratch, &stats,
                    ]
                    .iter()
                    .enumerate()
                    .map(|(i, b)| wgpu::BindGroupEntry {
                        binding: i as u32,
                        resource: b.as_entire_binding(),
                    })
                    .collect::<Vec<_>>(),
                });
                let dispatch = [0, 1].map(|_| {
                    device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("dispatch"),
                        size: dispatch_bytes,
                        usage: storage | wgpu::BufferUsages::INDIRECT | copy,
                        mapped_at_creation: false,
                    })
                });
                let writes = [0, 1].map(|i| {
                    device.create_bind_group(&wgpu::BindGroupDescriptor {
                        label: Some("axion dispatch"),
                        layout: dispatch_layout,
                        entries: &[wgpu::BindGroupEntry {
                            binding: 0,
                            resource: dispatch[i].as_entire_binding(),
                        }],
                    })
                });
                Chunk {
                    worlds,
                    uniform,
                    state,
                    control,
                    stats,
                    scratch,
                    bind,
                    dispatch,
                    writes,
                }
            };
            Batch {
                model: model.id(),
                packed: packed.clone(),
                worlds,
                continuations,
                chunks: chunks.into_iter().map(chunk).collect(),
                synced: None,
                time: 0.0,
            }
        })?;
        self.batch = Some(batch);
        Ok(())
    }

    /// Whether the device holds `state`: the host state last written to or read from
    /// the device, not changed since.
    fn synced_with(&self, state: &State) -> bool {
        self.batch
            .as_ref()
            .and_then(|b| b.synced.as_ref())
            .is_some_and(|s| s == state)
    }

    /// Writes the step length `h` into the uniform block (the only member that changes
    /// between runs).
    fn set_step(&self, h: f64) -> Result<(), GpuError> {
        let h32 = h as f32;
        for chunk in &self.batch()?.chunks {
            self.ctx.queue().write_buffer(
                &chunk.uniform,
                std::mem::offset_of!(Params, h) as u64,
                bytemuck::bytes_of(&h32),
            );
        }
        Ok(())
    }

    fn batch(&self) -> Result<&Batch, GpuError> {
        self.batch.as_ref().ok_or_else(|| GpuError::Operation {
            reason: "no state on the device: upload one first".into(),
        })
    }

    /// Writes `state` (all worlds) to the device.
    pub fn upload(&mut self, model: &Model, state: &State) -> Result<(), GpuError> {
        self.prepare(model, state.worlds())?;
        let batch = self.batch.as_mut().expect("prepared above");
        if state.body_count() != batch.packed.bodies {
            return Err(GpuError::UnsupportedModel {
                reason: format!(
                    "the state has {} bodies per world, the model {}",
                    state.body_count(),
                    batch.packed.bodies
                ),
            });
        }
        // The contact slots of the previous steps (what persists into the next step: the
        // approach velocity of a bouncing contact) do not belong to the new state.
        let mut encoder =
            self.ctx
                .device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("clear scratch"),
                });
        for chunk in &batch.chunks {
            let data = step::pack_state(&batch.packed, state, chunk.worlds.clone());
            self.ctx
                .queue()
                .write_buffer(&chunk.state, 0, bytemuck::cast_slice(&data));
            encoder.clear_buffer(&chunk.scratch, 0, None);
            // Statistics too: the flag of cut-short loops holds from here on.
            encoder.clear_buffer(&chunk.stats, 0, None);
        }
        self.ctx.queue().submit([encoder.finish()]);
        batch.synced = Some(state.clone());
        batch.time = state.time();
        Ok(())
    }

    /// Runs `steps` steps of length `h` on the device under `control`, without reading
    /// anything back.
    pub fn advance(&mut self, control: &Control, h: f64, steps: usize) -> Result<(), GpuError> {
        if control.has_parameters() {
            return Err(GpuError::UnsupportedModel {
                reason: "per-world friction and masses (Control::set_friction, set_body_mass) are not implemented on the GPU backend yet; step this batch on the CPU backend".into(),
            });
        }
        if (0..control.worlds())
            .any(|w| control.world_drives(w).iter().any(step::limit_unsupported))
        {
            return Err(GpuError::UnsupportedModel {
                reason: "a drive has a force limit, which the GPU backend does not implement yet; step this batch on the CPU backend".into(),
            });
        }
        if (0..control.worlds()).any(|w| {
            control
                .world_drives(w)
                .iter()
                .any(|d| d.feedforward() != 0.0)
        }) {
            return Err(GpuError::UnsupportedModel {
                reason: "a drive exerts a force (a force drive, MuJoCo's motor, or a feed-forward force: Control::set_drive_force), which the GPU backend does not implement yet; step this batch on the CPU backend".into(),
            });
        }
        let batch = self.batch.as_mut().ok_or_else(|| GpuError::Operation {
            reason: "no state on the device: upload one first".into(),
        })?;
        if control.worlds() != batch.worlds {
            return Err(GpuError::UnsupportedModel {
                reason: format!(
                    "the control has {} worlds, the state {}",
                    control.worlds(),
                    batch.worlds
                ),
            });
        }
        for chunk in &batch.chunks {
            let data = step::pack_control(&batch.packed, control, chunk.worlds.clone());
            self.ctx
                .queue()
                .write_buffer(&chunk.control, 0, bytemuck::cast_slice(&data));
        }
        self.set_step(h)?;
        let batch = self.batch.as_mut().expect("checked above");
        let p = kernels(&self.pipelines, &batch.packed)?;
        let iterations = self.settings.max_iterations * self.settings.attempts();
        let more = batch.continuations;
        self.ctx.checked(|ctx| {
            let mut encoder = ctx.device().create_command_encoder(&Default::default());
            for chunk in &batch.chunks {
                let run_slots = (4 * ST_RUN_ITERATIONS * chunk.worlds.len()) as u64;
                encoder.clear_buffer(&chunk.stats, run_slots, None);
            }
            for _ in 0..steps {
                for chunk in &batch.chunks {
                    for buffer in &chunk.dispatch {
                        encoder.clear_buffer(buffer, 0, None);
                    }
                }
                let mut pass = encoder.begin_compute_pass(&Default::default());
                for chunk in &batch.chunks {
                    chunk.record_step(&mut pass, p, iterations, more);
                }
            }
            ctx.queue().submit([encoder.finish()]);
        })?;
        batch.synced = None;
        // Step by step, as the CPU's clock and Backend::step advance it.
        for _ in 0..steps {
            batch.time += h;
        }
        Ok(())
    }

    /// Blocks until all submitted work (for example [`GpuBackend::advance`]) is done.
    pub fn finish(&self) -> Result<(), GpuError> {
        self.ctx
            .device()
            .poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|e| GpuError::Operation {
                reason: e.to_string(),
            })
    }

    /// Reads the device state into `state` (which must have the batch's size).
    pub fn download(&mut self, state: &mut State) -> Result<(), GpuError> {
        let batch = self.batch()?;
        if state.worlds() != batch.worlds || state.body_count() != batch.packed.bodies {
            return Err(GpuError::UnsupportedModel {
                reason: "the state does not match the batch on the device".into(),
            });
        }
        let p = &batch.packed;
        for chunk in &batch.chunks {
            let data = chunk.read(&self.ctx, &chunk.state, p.state_slots())?;
            step::unpack_state(p, &data, state, chunk.worlds.clone());
        }
        state.set_time(batch.time);
        let batch = self.batch.as_mut().expect("checked above");
        batch.synced = Some(state.clone());
        Ok(())
    }

    /// Statistics of the last step run on the device, per world.
    ///
    /// Fails with [`GpuError::LoopBudget`] when a kernel of any step since the last
    /// [`GpuBackend::upload`] found its loops cut short by the driver: the state is then
    /// not the solution of the step equations.
    pub fn last_report(&self) -> Result<StepReport, GpuError> {
        Ok(self.statistics()?.0)
    }

    /// The last step's report and the totals of the steps of the last
    /// [`GpuBackend::advance`] (its convergence step by step for its first
    /// [`RUN_BLOCK`] steps).
    fn statistics(&self) -> Result<(StepReport, RunTotals), GpuError> {
        let batch = self.batch()?;
        let mut worlds = Vec::with_capacity(batch.worlds);
        let mut truncated = Vec::new();
        let mut totals = RunTotals::default();
        let mut unconverged = [0u32; RUN_FLAG_SLOTS];
        let mut failed_world_steps = 0;
        for chunk in &batch.chunks {
            let s = chunk.read(&self.ctx, &chunk.stats, STATS)?;
            let w = chunk.worlds.len();
            for i in 0..w {
                let at = |slot: usize| s[slot * w + i];
                if at(ST_TRUNCATED) > 0.5 {
                    truncated.push(chunk.worlds.start + i);
                }
                worlds.push(StepStats {
                    iterations: at(ST_ITERATIONS) as usize,
                    chord_steps: 0,
                    converged: at(ST_CONVERGED) > 0.5,
                    dynamics: f64::from(at(ST_DYNAMICS)),
                    joints: f64::from(at(ST_JOINTS)),
                    drives: f64::from(at(ST_DRIVES)),
                    contacts: f64::from(at(ST_CONTACTS)),
                    friction: f64::from(at(ST_FRICTION)),
                    contact_count: at(ST_COUNT) as usize,
                    backtracks: at(ST_BACKTRACKS) as usize,
                    failed_solves: at(ST_FAILED) as usize,
                    substeps: 1,
                    fallback_creep: false,
                });
                // Every world finishes every step: the step count is the same in all.
                totals.steps = at(ST_RUN_STEPS) as usize;
                totals.iterations += at(ST_RUN_ITERATIONS) as usize;
                totals.max_iterations = totals.max_iterations.max(at(ST_RUN_MAX) as usize);
                for (k, bits) in unconverged.iter_mut().enumerate() {
                    let world = at(ST_RUN_UNCONVERGED + k) as u32;
                    failed_world_steps += world.count_ones() as usize;
                    *bits |= world;
                }
            }
        }
        if let Some(&first) = truncated.first() {
            return Err(GpuError::LoopBudget {
                adapter: self.ctx.adapter().to_string(),
                worlds: truncated.len(),
                first,
                rows: batch.packed.rows,
            });
        }
        let failed: usize = unconverged.iter().map(|b| b.count_ones() as usize).sum();
        totals.converged_steps = totals.steps.min(RUN_BLOCK) - failed;
        totals.converged_world_steps =
            totals.steps.min(RUN_BLOCK) * batch.worlds - failed_world_steps;
        totals.world_steps = totals.steps * batch.worlds;
        Ok((StepReport { worlds }, totals))
    }
}

impl Backend for GpuBackend {
    fn name(&self) -> String {
        format!("gpu (f32, wgpu on {})", self.ctx.adapter())
    }

    fn step(
        &mut self,
        model: &Model,
        state: &mut State,
        control: &Control,
        h: f64,
    ) -> Result<StepReport, StepError> {
        self.run(model, state, control, h, 1, &mut RunTotals::default())
    }

    /// Uploads the state if the host changed it, runs the steps on the device in blocks
    /// of at most 192 (`RUN_BLOCK`), reading back only the statistics after each block,
    /// and reads the state back at the end.
    fn run(
        &mut self,
        model: &Model,
        state: &mut State,
        control: &Control,
        h: f64,
        steps: usize,
        totals: &mut RunTotals,
    ) -> Result<StepReport, StepError> {
        if steps == 0 {
            return Ok(StepReport::default());
        }
        axion_model::backend::validate_step(model, state, control, h)?;
        let name = self.name();
        let unsupported = |e: GpuError| StepError::Unsupported {
            backend: name.clone(),
            reason: e.to_string(),
        };
        self.prepare(model, state.worlds()).map_err(unsupported)?;
        if !self.synced_with(state) {
            self.upload(model, state).map_err(unsupported)?;
        }
        let mut last = StepReport::default();
        let mut left = steps;
        while left > 0 {
            let block = left.min(RUN_BLOCK);
            self.advance(control, h, block).map_err(unsupported)?;
            let (report, done) = self.statistics().map_err(unsupported)?;
            totals.merge(&done);
            last = report;
            left -= block;
        }
        self.download(state).map_err(unsupported)?;
        Ok(last)
    }
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn chunks_cover_the_batch_in_order_with_sizes_that_differ_by_at_most_one() {
        for worlds in 1..200 {
            for most in 1..40 {
                let chunks = split(worlds, most);
                assert_eq!(chunks.len(), worlds.div_ceil(most), "{worlds} by {most}");
                assert_eq!(chunks[0].start, 0);
                assert_eq!(chunks.last().unwrap().end, worlds);
                assert!(chunks.windows(2).all(|c| c[0].end == c[1].start));
                let lens: Vec<usize> = chunks.iter().map(|c| c.len()).collect();
                let (lo, hi) = (lens.iter().min().unwrap(), lens.iter().max().unwrap());
                assert!(*hi <= most && hi - lo <= 1, "{worlds} by {most}: {lens:?}");
            }
        }
        assert_eq!(split(13, 5), [0..5, 5..9, 9..13]);
    }
}
