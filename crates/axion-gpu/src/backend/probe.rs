//! What the step kernel computes, read back row by row for the tests that compare the
//! WGSL with `axion-constraints`: the joint rows and drive coordinates
//! ([`GpuBackend::probe_rows`]), contact and joint-limit detection
//! ([`GpuBackend::probe_detect`]) and the contact, friction and limit rows at a given
//! iterate ([`GpuBackend::probe_unilateral`]). Each call compiles its probe kernel.

use axion_math::Twist;
use axion_model::{BodyId, Control, Model, State};
use nalgebra::{Vector2, Vector3};

use super::GpuBackend;
use crate::error::GpuError;
use crate::layout::*;
use crate::step::interleave;

/// One row as the kernel evaluates it (see [`GpuBackend::probe_rows`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowProbe {
    /// The joint error $c(q)$ (m or rad), or the drive's joint coordinate.
    pub value: f32,
    /// Jacobian blocks: parent (linear, angular), child (linear, angular).
    pub jacobian: [f32; 12],
}

/// A contact slot as detection left it (see [`GpuBackend::probe_detect`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactSlotProbe {
    /// The bodies a and b of the slot's contact pair.
    pub bodies: [BodyId; 2],
    /// Whether the slot holds a contact this step (the rest is meaningless if not).
    pub active: bool,
    /// The unit normal $n$, from body b towards body a.
    pub normal: Vector3<f32>,
    /// The contact point on a relative to its centre of mass, body axes (a rolling
    /// cylinder's rolled point: docs/step.md, "Rolling ahead"), and a's thickness there.
    pub local_a: Vector3<f32>,
    /// See `local_a`.
    pub thickness_a: f32,
    /// The point on b, body axes (world axes for the world), and b's thickness.
    pub local_b: Vector3<f32>,
    /// See `local_b`.
    pub thickness_b: f32,
    /// The tangent frame $(t_1, t_2)$.
    pub tangents: [Vector3<f32>; 2],
    /// $\mu_g$ of the scaled cone.
    pub mu: f32,
    /// The cone scaling $s$.
    pub scaling: Vector2<f32>,
    /// Lever arms where the bodies touch at the start of the step: $\rho_a = R_a p_a$,
    /// $\rho_b = R_b p_b$ except where a cylinder's point rolled ahead.
    pub lever_arms: [Vector3<f32>; 2],
    /// Effective inverse masses $J\tilde M^{-1}J^\top$ along $n$, $t_1$, $t_2$.
    pub inverse_masses: Vector3<f32>,
    /// The start-of-step gap $g^-$ (m).
    pub gap: f32,
    /// The approach velocity (m/s).
    pub approach: f32,
    /// The velocity bias $b$ of a bouncing contact (m/s).
    pub bias: f32,
    /// Whether the normal row is velocity-level (restitution).
    pub bounce: bool,
}

/// A joint-limit slot as detection left it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LimitProbe {
    /// Whether the bound is within reach this step.
    pub active: bool,
    /// $w = J\tilde M^{-1}J^\top$ of its row at the start of the step.
    pub inverse_mass: f32,
}

/// One world's detection: its contact slots and joint-limit slots in the order of
/// their rows.
#[derive(Clone, Debug, PartialEq)]
pub struct Detection {
    /// The contact slots (three rows each: normal, two friction rows).
    pub contacts: Vec<ContactSlotProbe>,
    /// The joint-limit slots (a row each, after the contact rows).
    pub limits: Vec<LimitProbe>,
}

/// The iterate of one world at which [`GpuBackend::probe_unilateral`] evaluates the rows.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeIterate {
    /// The velocities $u^+$, one per body (static bodies: ignored).
    pub velocities: Vec<Twist>,
    /// The multipliers of the contact rows (three per slot: $\lambda_n$ and the
    /// friction force in $(t_1, t_2)$, N) and then of the limit rows.
    pub multipliers: Vec<f64>,
}

/// A row's linearisation as the kernel builds it (see [`GpuBackend::probe_unilateral`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowLinearization {
    /// The residual $h_i$ as the Schur system takes it.
    pub residual: f32,
    /// The compliance $C_i$.
    pub compliance: f32,
    /// `Some(step)` where the row's multiplier step is fixed outside the linear system.
    pub fixed_step: Option<f32>,
    /// With `GpuSettings::slip_coupling`: the factor of the previous row's step added
    /// to this fixed row's step (0 where none, or folded into `fixed_step`).
    pub coupling: f32,
    /// The multiplier its Jacobian carries into the dynamics.
    pub multiplier: f32,
    /// The Jacobian (also the force direction): parent or body a (linear, angular),
    /// child or body b (linear, angular).
    pub jacobian: [f32; 12],
}

/// One world's Newton system as [`GpuBackend::probe_tree`] reads it (every row; fixed
/// rows have zero entries). A $6\times6$ block is stored by its $3\times3$ blocks
/// (linear–linear, linear–angular, angular–linear, angular–angular), each column-major.
#[derive(Clone, Debug, PartialEq)]
pub struct TreeProbe {
    /// Whether the system was solved along the tree (false where the model's rows do
    /// not all lie on it, the backend's `tree_solve` is off, or a block was singular;
    /// the other fields are then meaningless).
    pub solved: bool,
    /// The bodies of each row (side 0, side 1; `None` for the world).
    pub row_bodies: Vec<[Option<usize>; 2]>,
    /// Each body's parent in the tree of the plan.
    pub tree_parent: Vec<Option<usize>>,
    /// Rows whose step is fixed at the iterate (not in the system).
    pub fixed: Vec<bool>,
    /// The solve's $\Delta u$ per body.
    pub velocity_steps: Vec<[f32; 6]>,
    /// The solve's $\Delta\lambda$ per row.
    pub multiplier_steps: Vec<f32>,
    /// Each row's velocity Jacobian $J$: side 0 (linear, angular), side 1.
    pub jacobians: Vec<[f32; 12]>,
    /// A fixed row's coupling to the row before it (its force follows that row's step
    /// times this: `GpuSettings::slip_coupling`), 0 elsewhere.
    pub couplings: Vec<f32>,
    /// Each row's compliance $C$ (with the regularisation).
    pub compliances: Vec<f32>,
    /// Each row's residual $h_c$.
    pub residuals: Vec<f32>,
    /// Each body's dynamics residual less the fixed rows' forces, $h'_{dyn}$.
    pub body_residuals: Vec<[f32; 6]>,
    /// Each body's Newton block $\hat M_{bb}$.
    pub blocks: Vec<[f32; 36]>,
    /// Each body's couplings to its tree parent $p$: $N_{bp}$, then $N_{pb}$ (the
    /// Newton matrix holds $-N$).
    pub links: Vec<[f32; 72]>,
}

impl GpuBackend {
    /// The rows the step kernel evaluates at the poses of `state`, per world: the
    /// model's joint rows, then one coordinate row per drive. Replaces the batch's
    /// device state.
    pub fn probe_rows(
        &mut self,
        model: &Model,
        state: &State,
    ) -> Result<Vec<Vec<RowProbe>>, GpuError> {
        self.upload(model, state)?;
        self.run_probe("probe_rows")?;
        let rows = self.batch()?.packed.rows;
        self.per_world(|s, at| {
            (0..rows)
                .map(|i| RowProbe {
                    value: at(s.res + i),
                    jacobian: std::array::from_fn(|k| at(s.jac + 12 * i + k)),
                })
                .collect()
        })
    }

    /// Contact and joint-limit detection as a step of length `h` from `state` starts
    /// it (no contact persists from an earlier step), per world. Replaces the batch's
    /// device state; [`GpuBackend::probe_unilateral`] evaluates the rows after it.
    pub fn probe_detect(
        &mut self,
        model: &Model,
        state: &State,
        h: f64,
    ) -> Result<Vec<Detection>, GpuError> {
        self.upload(model, state)?;
        self.set_step(h)?;
        self.run_probe("probe_detect")?;
        let p = &self.batch()?.packed;
        let (slots, limits) = (p.slots, p.limits);
        let bodies: Vec<[BodyId; 2]> = (0..slots)
            .map(|k| {
                let pair = p.model_u[p.pair_base_u + p.pairs * PAIR_U + k] as usize;
                let at =
                    |side: usize| BodyId(p.model_u[p.pair_base_u + pair * PAIR_U + side] as usize);
                [at(0), at(1)]
            })
            .collect();
        self.per_world(|s, at| {
            let v3 = |k: usize| Vector3::new(at(k), at(k + 1), at(k + 2));
            Detection {
                contacts: (0..slots)
                    .map(|k| {
                        let c = s.con + CONTACT_S * k;
                        ContactSlotProbe {
                            bodies: bodies[k],
                            active: at(c + C_ACTIVE) > 0.5,
                            normal: v3(c + C_N),
                            local_a: v3(c + C_PA),
                            thickness_a: at(c + C_TA),
                            local_b: v3(c + C_PB),
                            thickness_b: at(c + C_TB),
                            tangents: [v3(c + C_T1), v3(c + C_T2)],
                            mu: at(c + C_MU),
                            scaling: Vector2::new(at(c + C_S), at(c + C_S + 1)),
                            lever_arms: [v3(c + C_RHOA), v3(c + C_RHOB)],
                            inverse_masses: v3(c + C_W),
                            gap: at(c + C_GAP0),
                            approach: at(c + C_APPROACH),
                            bias: at(c + C_BIAS),
                            bounce: at(c + C_BOUNCE) > 0.5,
                        }
                    })
                    .collect(),
                limits: (0..limits)
                    .map(|k| LimitProbe {
                        active: at(s.lim + LIMIT_S * k) > 0.5,
                        inverse_mass: at(s.lim + LIMIT_S * k + 1),
                    })
                    .collect(),
            }
        })
    }

    /// The contact rows (normal, two friction rows per slot) and joint-limit rows of
    /// each world at `iterate[world]`, with the detection of the last
    /// [`GpuBackend::probe_detect`].
    pub fn probe_unilateral(
        &mut self,
        iterate: &[ProbeIterate],
    ) -> Result<Vec<Vec<RowLinearization>>, GpuError> {
        let batch = self.batch()?;
        let p = &batch.packed;
        let first = p.contact_row0();
        let unilateral = p.rows - first;
        if iterate.len() != batch.worlds
            || iterate
                .iter()
                .any(|it| it.velocities.len() != p.bodies || it.multipliers.len() != unilateral)
        {
            return Err(GpuError::UnsupportedModel {
                reason: format!(
                    "a probe iterate needs {} worlds of {} velocities and {unilateral} multipliers",
                    batch.worlds, p.bodies
                ),
            });
        }
        let s = p.scratch();
        for chunk in &batch.chunks {
            let n = chunk.worlds.len() as u64;
            let u = interleave(chunk.worlds.clone(), 6 * p.bodies, |w, out| {
                for t in &iterate[w].velocities {
                    out.extend(t.iter().map(|&x| x as f32));
                }
            });
            let l = interleave(chunk.worlds.clone(), p.rows, |w, out| {
                out.resize(first, 0.0);
                out.extend(iterate[w].multipliers.iter().map(|&x| x as f32));
            });
            let queue = self.ctx.queue();
            for (slot, data) in [(s.u, u), (s.l, l)] {
                queue.write_buffer(
                    &chunk.scratch,
                    4 * slot as u64 * n,
                    bytemuck::cast_slice(&data),
                );
            }
        }
        self.run_probe("probe_unilateral")?;
        self.per_world(|s, at| {
            (first..p.rows)
                .map(|i| RowLinearization {
                    residual: at(s.res + i),
                    compliance: at(s.creg + i),
                    fixed_step: (at(s.fix + i) > 0.5).then(|| at(s.fixv + i)),
                    coupling: if self.settings.slip_coupling {
                        at(s.cpl + i)
                    } else {
                        0.0
                    },
                    multiplier: at(s.mu + i),
                    jacobian: std::array::from_fn(|k| at(s.jac + 12 * i + k)),
                })
                .collect()
        })
    }

    /// The Newton system of the first iteration of a step of length `h` under
    /// `control` from the device's state (after [`GpuBackend::upload`], or after steps,
    /// whose contact forces are then its warm start), per world, set up and solved
    /// along the tree as a step does ([`crate::tree`]: a model whose rows all lie on its
    /// tree): the system and its solution. Leaves the device state as it was.
    pub fn probe_tree(&mut self, control: &Control, h: f64) -> Result<Vec<TreeProbe>, GpuError> {
        let batch = self.batch()?;
        for chunk in &batch.chunks {
            let data = crate::step::pack_control(&batch.packed, control, chunk.worlds.clone());
            self.ctx
                .queue()
                .write_buffer(&chunk.control, 0, bytemuck::cast_slice(&data));
        }
        self.set_step(h)?;
        self.run_probe("probe_tree")?;
        let batch = self.batch()?;
        let p = &batch.packed;
        let (rows, bodies) = (p.rows, p.bodies);
        let row_bodies: Vec<[Option<usize>; 2]> = (0..rows)
            .map(|i| {
                std::array::from_fn(|side| {
                    let b = p.model_u[p.rowbody_base_u + 2 * i + side];
                    (b != NONE).then_some(b as usize)
                })
            })
            .collect();
        let factored: Vec<bool> = batch
            .chunks
            .iter()
            .map(|chunk| {
                let stats = chunk.read(&self.ctx, &chunk.stats, STATS)?;
                let n = chunk.worlds.len();
                Ok((0..n).map(move |w| stats[ST_TREE * n + w] > 0.5))
            })
            .collect::<Result<Vec<_>, GpuError>>()?
            .into_iter()
            .flatten()
            .collect();
        let mut world = 0;
        self.per_world(|s, at| {
            let floats = |from: usize, n: usize| (0..n).map(|k| at(from + k)).collect::<Vec<_>>();
            let probe = TreeProbe {
                solved: factored[world],
                row_bodies: row_bodies.clone(),
                tree_parent: p.tree.parent.clone(),
                fixed: (0..rows).map(|i| at(s.fix + i) > 0.5).collect(),
                velocity_steps: (0..bodies)
                    .map(|b| std::array::from_fn(|k| at(s.du + 6 * b + k)))
                    .collect(),
                multiplier_steps: floats(s.x, rows),
                jacobians: (0..rows)
                    .map(|i| std::array::from_fn(|k| at(s.jac + 12 * i + k)))
                    .collect(),
                couplings: if self.settings.slip_coupling {
                    floats(s.cpl, rows)
                } else {
                    vec![0.0; rows]
                },
                compliances: floats(s.creg, rows),
                residuals: floats(s.res, rows),
                body_residuals: (0..bodies)
                    .map(|b| std::array::from_fn(|k| at(s.hdf + 6 * b + k)))
                    .collect(),
                blocks: (0..bodies)
                    .map(|b| std::array::from_fn(|k| at(s.tm + 36 * b + k)))
                    .collect(),
                links: (0..bodies)
                    .map(|b| std::array::from_fn(|k| at(s.tn + 72 * b + k)))
                    .collect(),
            };
            world += 1;
            probe
        })
    }

    /// Reads the scratch of every world and maps it with `f(layout, slot → value)`.
    fn per_world<T>(
        &self,
        mut f: impl FnMut(&Scratch, &dyn Fn(usize) -> f32) -> T,
    ) -> Result<Vec<T>, GpuError> {
        let batch = self.batch()?;
        let layout = batch.packed.scratch();
        let mut out = Vec::with_capacity(batch.worlds);
        for chunk in &batch.chunks {
            let data = chunk.read(&self.ctx, &chunk.scratch, layout.total)?;
            let n = chunk.worlds.len();
            for world in 0..n {
                out.push(f(&layout, &|slot| data[slot * n + world]));
            }
        }
        Ok(out)
    }
}
