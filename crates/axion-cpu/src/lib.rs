//! # axion-cpu
//!
//! The reference backend of axion-rs: every world's step is one implicit non-smooth
//! system solved by Newton's method in f64, with the Newton matrix factorized by
//! faer's sparse LU (symbolic analysis reused while the row pattern is unchanged).
//! Contacts are found once per step at the start-of-step poses (`axion-collision`)
//! and enter as position-level Fischer–Burmeister rows with exact Coulomb friction
//! (projection residual, semismooth Newton). See [`newton`] for the equations and
//! `docs/step.md` for the design.

pub mod newton;
pub mod settings;
pub mod sparse;

use std::collections::HashMap;

use axion_collision::{CollisionWorld, Contact};
use axion_model::{Backend, Control, Model, State, StepError, StepReport};

pub use settings::{Integrator, SolverSettings};

use newton::{Layout, StepInput, WorldSolver};
use sparse::SparseLu;

/// What is cached for one model structure: the collision world and one sparse LU per
/// row pattern seen (the model's rows plus the contacts' body pairs).
struct Cache {
    layout: Layout,
    shape_count: usize,
    collision: CollisionWorld,
    newton: HashMap<Vec<(usize, usize)>, Option<SparseLu>>,
    projection: Option<SparseLu>,
    /// Per world, the previous step's contacts, their forces (λ_n, λ_t1, λ_t2) and the
    /// normal velocity used for their restitution.
    previous: Vec<Vec<(Contact, [f64; 3], f64)>>,
}

/// A contact persists from the previous step if it joins the same bodies at points
/// this close (m) on both, with normals within about 8°.
const PERSIST_DISTANCE: f64 = 5e-3;
const PERSIST_COS: f64 = 0.99;

/// A contact detected with a larger gap (m) was still open.
const OPEN_GAP: f64 = 1e-6;

/// The previous step's contact matching `c`: its force moved into `c`'s tangent frame,
/// and its approach velocity if it was still open then (the speculative contact closed
/// the gap in that step, so the impact speed is the one it had before).
fn persisted(
    c: &Contact,
    previous: &[(Contact, [f64; 3], f64)],
) -> Option<([f64; 3], Option<f64>)> {
    previous.iter().find_map(|(p, l, approach)| {
        let same = p.body_a == c.body_a
            && p.body_b == c.body_b
            && p.point.normal.dot(&c.point.normal) > PERSIST_COS
            && (p.point.local_a - c.point.local_a).norm() < PERSIST_DISTANCE
            && (p.point.local_b - c.point.local_b).norm() < PERSIST_DISTANCE;
        same.then(|| {
            let friction = p.frame.t1 * l[1] + p.frame.t2 * l[2];
            let impact = (p.gap > OPEN_GAP).then_some(*approach);
            (
                [l[0], friction.dot(&c.frame.t1), friction.dot(&c.frame.t2)],
                impact,
            )
        })
    })
}

/// Patterns kept at most; beyond this the cache is cleared (a scene whose contact set
/// never repeats gains nothing from it).
const MAX_PATTERNS: usize = 256;

/// The CPU reference backend.
pub struct CpuBackend {
    settings: SolverSettings,
    cache: Option<Cache>,
}

impl CpuBackend {
    /// A backend with the given settings.
    pub fn new(settings: SolverSettings) -> Self {
        Self {
            settings,
            cache: None,
        }
    }

    /// The settings.
    pub fn settings(&self) -> &SolverSettings {
        &self.settings
    }

    /// Builds (or keeps) the cache for `model`.
    fn prepare(&mut self, model: &Model) -> Result<(), StepError> {
        let layout = Layout::new(model);
        let shape_count = model.bodies().iter().map(|b| b.shapes.len()).sum();
        if self
            .cache
            .as_ref()
            .is_some_and(|c| c.layout == layout && c.shape_count == shape_count)
        {
            return Ok(());
        }
        let collision = CollisionWorld::new(model).map_err(|e| StepError::Unsupported {
            backend: self.name(),
            reason: e.to_string(),
        })?;
        self.cache = Some(Cache {
            layout,
            shape_count,
            collision,
            newton: HashMap::new(),
            projection: None,
            previous: Vec::new(),
        });
        Ok(())
    }
}

impl Default for CpuBackend {
    fn default() -> Self {
        Self::new(SolverSettings::default())
    }
}

impl Backend for CpuBackend {
    fn name(&self) -> String {
        "cpu (f64, Newton with faer sparse LU)".to_string()
    }

    fn step(
        &mut self,
        model: &Model,
        state: &mut State,
        control: &Control,
        h: f64,
    ) -> Result<StepReport, StepError> {
        axion_model::backend::validate_step(model, state, control, h)?;
        self.prepare(model)?;
        let settings = self.settings;
        let cache = self.cache.as_mut().expect("prepared above");
        let layout = &cache.layout;
        let mut report = StepReport::default();
        let mut contacts = Vec::new();
        for w in 0..state.worlds() {
            let q0 = state.world_poses(w).to_vec();
            let u0 = state.world_velocities(w).to_vec();
            // Speculative margin: the settings' margin plus two steps of the fastest body.
            let speed = u0
                .iter()
                .map(|u| axion_math::linear(u).norm())
                .fold(0.0, f64::max);
            contacts.clear();
            cache.collision.detect(
                &q0,
                settings.contact_margin + 2.0 * h * speed,
                &mut contacts,
            );
            let integrator = if contacts.is_empty() {
                settings.integrator
            } else {
                Integrator::BackwardEuler
            };
            let mut warm = state.joint_forces(w).to_vec();
            warm.extend_from_slice(state.drive_forces(w));
            cache.previous.resize_with(state.worlds(), Vec::new);
            let mut approach = Vec::with_capacity(contacts.len());
            for c in &contacts {
                let (a, b) = (c.body_a.0, c.body_b.0);
                let now = c.point.normal_jacobian(&q0[a], &q0[b]).dot(&u0[a], &u0[b]);
                let found = persisted(c, &cache.previous[w]);
                approach.push(
                    found
                        .and_then(|(_, impact)| impact)
                        .map_or(now, |v| v.min(now)),
                );
                if settings.contact_persistence {
                    warm.extend(found.map_or([0.0; 3], |(l, _)| l));
                }
            }
            let input = StepInput {
                model,
                layout,
                settings: &settings,
                h,
                q0: &q0,
                u0: &u0,
                control,
                world: w,
                contacts: &contacts,
                approach: &approach,
                integrator,
            };
            let mut solver = WorldSolver::new(input);
            let signature: Vec<(usize, usize)> =
                contacts.iter().map(|c| (c.body_a.0, c.body_b.0)).collect();
            if !cache.newton.contains_key(&signature) && cache.newton.len() >= MAX_PATTERNS {
                cache.newton.clear();
            }
            let projection = if integrator == Integrator::EnergyMomentum {
                let n = 6 * layout.dyn_bodies.len() + layout.joint_rows;
                Some(
                    cache
                        .projection
                        .get_or_insert_with(|| SparseLu::new(n, &solver.projection_pattern())),
                )
            } else {
                None
            };
            let lu = cache.newton.entry(signature).or_default();
            let result = solver.solve(&warm, lu, projection);
            let world = state.world_mut(w);
            world.poses.copy_from_slice(&result.poses);
            world.velocities.copy_from_slice(&result.velocities);
            let (jr, dr) = (layout.joint_rows, world.drive_forces.len());
            world.joint_forces.copy_from_slice(&result.lambda[..jr]);
            world
                .drive_forces
                .copy_from_slice(&result.lambda[jr..jr + dr]);
            let contact_forces = result.lambda[jr + dr..].chunks_exact(3);
            cache.previous[w] = contacts
                .iter()
                .zip(contact_forces)
                .zip(&approach)
                .map(|((c, l), v)| (*c, [l[0], l[1], l[2]], *v))
                .collect();
            report.worlds.push(result.stats);
        }
        state.advance_time(h);
        Ok(report)
    }
}
