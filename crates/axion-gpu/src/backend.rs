//! [`GpuBackend`]: the [`Backend`] of the GPU, and its device-resident batch.

use axion_model::{Backend, Control, Model, State, StepError, StepReport, StepStats};
use wgpu::util::DeviceExt;

use crate::context::{AdapterReport, GpuContext};
use crate::error::GpuError;
use crate::step::{self, Packed, Params, STATS, WORKGROUP};

/// Newton settings of the GPU backend. The tolerances are those f32 arithmetic can
/// reach on the canonical scenes (see `docs/gpu.md`); the CPU's are 1e-10 and below.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuSettings {
    /// Most Newton iterations per step.
    pub max_iterations: usize,
    /// Most conjugate-residual iterations per Newton iteration.
    pub max_linear_iterations: usize,
    /// The conjugate residual stops at $\lVert r\rVert \le$ this $\times \lVert b\rVert$.
    pub linear_tolerance: f64,
    /// Converged when the dynamics and drive residuals are below this (m/s) …
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
    /// step (the CPU's semismooth step has it; FRICTION.md's symmetric form lags it one
    /// iterate). The Schur system is then not symmetric and every world solves it by
    /// ORTHOMIN(2); a world whose coupled iteration stalls restarts the step with the
    /// coupling lagged. Measured on lavapipe (docs/gpu.md): the skid-steer turning at
    /// h = 0.05 converges in 11/20 steps and ends 0.03 mm from the CPU (off: 4/20,
    /// 0.18 m), but the stack of 10 boxes converges in 2/100 steps at h = 0.01 (off:
    /// 100/100), hence off by default.
    pub slip_coupling: bool,
}

impl Default for GpuSettings {
    fn default() -> Self {
        Self {
            max_iterations: 30,
            max_linear_iterations: 200,
            linear_tolerance: 1e-5,
            velocity_tolerance: 1e-4,
            position_tolerance: 2e-6,
            max_backtracks: 8,
            regularization: 1e-6,
            contact_margin: 0.02,
            contact_tolerance: 1e-4,
            geometric_stiffness: true,
            slip_coupling: false,
        }
    }
}

/// Buffers of one model and batch size on the device.
struct Batch {
    packed: Packed,
    worlds: usize,
    uniform: wgpu::Buffer,
    state: wgpu::Buffer,
    control: wgpu::Buffer,
    stats: wgpu::Buffer,
    scratch: wgpu::Buffer,
    bind: wgpu::BindGroup,
    /// The host state last written to or read from the device, and the device time.
    synced: Option<State>,
    time: f64,
}

/// The GPU backend: every world of a batch stepped by one kernel dispatch per step,
/// state kept on the device between steps.
///
/// Use it through [`Backend::step`] (uploads the state if the host changed it, steps,
/// reads back), or keep the state on the device with [`GpuBackend::upload`],
/// [`GpuBackend::advance`] and [`GpuBackend::download`].
pub struct GpuBackend {
    ctx: GpuContext,
    settings: GpuSettings,
    layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    module: wgpu::ShaderModule,
    /// The kernels compiled without and with the contact code (the `CONTACTS` pipeline
    /// constant of `step.wgsl`), each on first use.
    pipelines: [Option<Pipelines>; 2],
    batch: Option<Batch>,
}

/// The five kernels of a step (see `step.wgsl`), and the rows probe.
struct Pipelines {
    begin: wgpu::ComputePipeline,
    direction: wgpu::ComputePipeline,
    update: wgpu::ComputePipeline,
    search: wgpu::ComputePipeline,
    finish: wgpu::ComputePipeline,
    probe_rows: wgpu::ComputePipeline,
}

/// One row as the kernel evaluates it (see [`GpuBackend::probe_rows`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowProbe {
    /// The joint error $c(q)$ (m or rad), or the drive's joint coordinate.
    pub value: f32,
    /// Jacobian blocks: parent (linear, angular), child (linear, angular).
    pub jacobian: [f32; 12],
}

impl GpuBackend {
    /// Finds an adapter and loads the step module (its kernels are compiled for the
    /// first model stepped: with or without the contact code).
    pub fn new(settings: GpuSettings) -> Result<Self, GpuError> {
        let ctx = GpuContext::new()?;
        let (layout, pipeline_layout, module) = ctx.checked(|ctx| {
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
            let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("axion step"),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            });
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("axion step"),
                source: wgpu::ShaderSource::Wgsl(step::step_source().into()),
            });
            (layout, pipeline_layout, module)
        })?;
        Ok(Self {
            ctx,
            settings,
            layout,
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
        let (layout, module) = (&self.pipeline_layout, &self.module);
        let slip_coupling = self.settings.slip_coupling;
        let pipelines = self.ctx.checked(|ctx| {
            let constants = [
                ("CONTACTS", if contacts { 1.0 } else { 0.0 }),
                ("SLIP_COUPLING", if slip_coupling { 1.0 } else { 0.0 }),
            ];
            let pipeline = |entry| {
                ctx.device()
                    .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                        label: Some(entry),
                        layout: Some(layout),
                        module,
                        entry_point: Some(entry),
                        compilation_options: wgpu::PipelineCompilationOptions {
                            constants: &constants,
                            ..Default::default()
                        },
                        cache: None,
                    })
            };
            Pipelines {
                begin: pipeline("step_begin"),
                direction: pipeline("step_direction"),
                update: pipeline("step_update"),
                search: pipeline("step_search"),
                finish: pipeline("step_finish"),
                probe_rows: pipeline("probe_rows"),
            }
        })?;
        self.pipelines[slot] = Some(pipelines);
        Ok(())
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

    /// Allocates the buffers for `model` and `worlds` (kept while both stay the same).
    fn prepare(&mut self, model: &Model, worlds: usize) -> Result<(), GpuError> {
        let packed = step::pack(model)?;
        self.compile(packed.unilateral())?;
        if let Some(b) = &self.batch
            && b.packed == packed
            && b.worlds == worlds
        {
            return Ok(());
        }
        self.batch = None;
        let limits = self.ctx.limits();
        let max_binding = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        let bytes = |slots: usize| (slots.max(1) * worlds * 4) as u64;
        let largest = bytes(packed.scratch_slots());
        if largest > max_binding {
            return Err(GpuError::TooLarge {
                reason: format!(
                    "{worlds} worlds need {largest} bytes of scratch, the adapter binds at most {max_binding}"
                ),
            });
        }
        let groups = worlds.div_ceil(WORKGROUP as usize);
        if groups > limits.max_compute_workgroups_per_dimension as usize {
            return Err(GpuError::TooLarge {
                reason: format!(
                    "{worlds} worlds need {groups} workgroups, the adapter allows {}",
                    limits.max_compute_workgroups_per_dimension
                ),
            });
        }
        let s = &self.settings;
        let params = Params {
            counts: [
                worlds as u32,
                packed.bodies as u32,
                packed.joints as u32,
                packed.drives as u32,
                packed.rows as u32,
                packed.joint_rows as u32,
                s.max_iterations as u32,
                s.max_linear_iterations as u32,
                s.max_backtracks as u32,
                u32::from(s.geometric_stiffness),
                packed.drive_base_u as u32,
                packed.rowbody_base_u as u32,
                packed.adj_offset_base_u as u32,
                packed.adj_base_u as u32,
                packed.joint_base_f as u32,
                packed.scratch_slots() as u32,
                packed.pairs as u32,
                packed.pair_base_u as u32,
                packed.pair_base_f as u32,
                packed.contact_row0() as u32,
            ],
            reals: [
                0.0,
                s.velocity_tolerance as f32,
                s.position_tolerance as f32,
                s.linear_tolerance as f32,
            ],
            gravity: packed.gravity,
            regularization: s.regularization as f32,
            contact: [
                s.contact_margin as f32,
                s.contact_tolerance as f32,
                axion_constraints::contact::DEFAULT_FB_EPS_SQ as f32,
                0.0,
            ],
            limits: [
                packed.limits as u32,
                packed.limit_base_u as u32,
                packed.limit_base_f as u32,
                packed.limit_row0() as u32,
            ],
        };
        let layout = &self.layout;
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
            let empty = |label, size, usage| {
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(label),
                    size,
                    usage,
                    mapped_at_creation: false,
                })
            };
            let uniform = init(
                "params",
                bytemuck::bytes_of(&params),
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            );
            // Empty arrays are padded to one element (bindings cannot be empty).
            let mut model_f = packed.model_f.clone();
            model_f.push(0.0);
            let mut model_u = packed.model_u.clone();
            model_u.push(0);
            let model_f = init("model f32", bytemuck::cast_slice(&model_f), storage);
            let model_u = init("model u32", bytemuck::cast_slice(&model_u), storage);
            let state = empty("state", bytes(packed.state_slots()), storage | copy);
            let control = empty("control", bytes(packed.control_slots()), storage | copy);
            let scratch = empty("scratch", largest, storage | copy);
            let stats = empty("stats", bytes(STATS), storage | copy);
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
            Batch {
                packed: packed.clone(),
                worlds,
                uniform,
                state,
                control,
                stats,
                scratch,
                bind,
                synced: None,
                time: 0.0,
            }
        })?;
        self.batch = Some(batch);
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
        let data = step::pack_state(&batch.packed, state);
        self.ctx
            .queue()
            .write_buffer(&batch.state, 0, bytemuck::cast_slice(&data));
        // The contact slots of the previous steps (what persists into the next step: the
        // approach velocity of a bouncing contact) do not belong to the new state.
        let mut encoder =
            self.ctx
                .device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("clear scratch"),
                });
        encoder.clear_buffer(&batch.scratch, 0, None);
        self.ctx.queue().submit([encoder.finish()]);
        batch.synced = Some(state.clone());
        batch.time = state.time();
        Ok(())
    }

    /// Runs `steps` steps of length `h` on the device under `control`, without reading
    /// anything back.
    pub fn advance(&mut self, control: &Control, h: f64, steps: usize) -> Result<(), GpuError> {
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
        let queue = self.ctx.queue();
        let data = step::pack_control(&batch.packed, control);
        queue.write_buffer(&batch.control, 0, bytemuck::cast_slice(&data));
        // Only h changes between calls: it is the first real of the uniform block.
        let h32 = h as f32;
        queue.write_buffer(
            &batch.uniform,
            std::mem::offset_of!(Params, reals) as u64,
            bytemuck::bytes_of(&h32),
        );
        let groups = batch.worlds.div_ceil(WORKGROUP as usize) as u32;
        let p = kernels(&self.pipelines, &batch.packed)?;
        let mut sequence = vec![&p.begin];
        for _ in 0..self.settings.max_iterations {
            sequence.extend([&p.direction, &p.update, &p.search]);
        }
        sequence.push(&p.finish);
        self.ctx.checked(|ctx| {
            let mut encoder = ctx.device().create_command_encoder(&Default::default());
            for _ in 0..steps {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                pass.set_bind_group(0, &batch.bind, &[]);
                for pipeline in &sequence {
                    pass.set_pipeline(pipeline);
                    pass.dispatch_workgroups(groups, 1, 1);
                }
            }
            ctx.queue().submit([encoder.finish()]);
        })?;
        batch.synced = None;
        batch.time += h * steps as f64;
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
        let size = (batch.packed.state_slots() * batch.worlds * 4) as u64;
        let raw = self.ctx.read_back(&batch.state, size.max(4))?;
        let data: Vec<f32> = bytemuck::pod_collect_to_vec(&raw);
        step::unpack_state(&batch.packed, &data, state);
        let dt = batch.time - state.time();
        state.advance_time(dt);
        let batch = self.batch.as_mut().expect("checked above");
        batch.synced = Some(state.clone());
        Ok(())
    }

    /// The rows the step kernel evaluates at the poses of `state`, per world: the
    /// model's joint rows, then one coordinate row per drive. For tests of the WGSL
    /// row math against `axion-constraints`. Replaces the batch's device state.
    pub fn probe_rows(
        &mut self,
        model: &Model,
        state: &State,
    ) -> Result<Vec<Vec<RowProbe>>, GpuError> {
        self.upload(model, state)?;
        let batch = self.batch()?;
        let probe = &kernels(&self.pipelines, &batch.packed)?.probe_rows;
        let groups = batch.worlds.div_ceil(WORKGROUP as usize) as u32;
        self.ctx.checked(|ctx| {
            let mut encoder = ctx.device().create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                pass.set_bind_group(0, &batch.bind, &[]);
                pass.set_pipeline(probe);
                pass.dispatch_workgroups(groups, 1, 1);
            }
            ctx.queue().submit([encoder.finish()]);
        })?;
        let p = &batch.packed;
        let w = batch.worlds;
        let size = (p.scratch_slots() * w * 4) as u64;
        let raw = self.ctx.read_back(&batch.scratch, size)?;
        let s: Vec<f32> = bytemuck::pod_collect_to_vec(&raw);
        let at = |slot: usize, world: usize| s[slot * w + world];
        Ok((0..w)
            .map(|world| {
                (0..p.rows)
                    .map(|i| RowProbe {
                        value: at(p.slot_res() + i, world),
                        jacobian: std::array::from_fn(|k| at(p.slot_jac() + 12 * i + k, world)),
                    })
                    .collect()
            })
            .collect())
    }

    /// Statistics of the last step run on the device, per world.
    pub fn last_report(&self) -> Result<StepReport, GpuError> {
        let batch = self.batch()?;
        let w = batch.worlds;
        let raw = self.ctx.read_back(&batch.stats, (STATS * w * 4) as u64)?;
        let s: Vec<f32> = bytemuck::pod_collect_to_vec(&raw);
        Ok(StepReport {
            worlds: (0..w)
                .map(|i| StepStats {
                    iterations: s[i] as usize,
                    converged: s[w + i] > 0.5,
                    dynamics: f64::from(s[2 * w + i]),
                    joints: f64::from(s[3 * w + i]),
                    drives: f64::from(s[4 * w + i]),
                    contacts: f64::from(s[9 * w + i]),
                    friction: f64::from(s[10 * w + i]),
                    contact_count: s[11 * w + i] as usize,
                    backtracks: s[5 * w + i] as usize,
                    failed_solves: s[6 * w + i] as usize,
                })
                .collect(),
        })
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
        axion_model::backend::validate_step(model, state, control, h)?;
        let name = self.name();
        let unsupported = |e: GpuError| StepError::Unsupported {
            backend: name.clone(),
            reason: e.to_string(),
        };
        self.prepare(model, state.worlds()).map_err(unsupported)?;
        let fresh = self
            .batch
            .as_ref()
            .and_then(|b| b.synced.as_ref())
            .is_some_and(|s| s == state);
        if !fresh {
            self.upload(model, state).map_err(unsupported)?;
        }
        self.advance(control, h, 1).map_err(unsupported)?;
        self.download(state).map_err(unsupported)?;
        self.last_report().map_err(unsupported)
    }
}
