//! # axion-cpu
//!
//! The reference backend of axion-rs: every world's step is one implicit non-smooth
//! system solved by Newton's method in f64. Where the bodies form a tree (a robot
//! on static ground) its linear system is solved by block elimination along the tree,
//! each body with the rows joining it to its parent ([`tree`]); otherwise the rows are
//! eliminated onto the bodies' velocities ([`reduced`]) and that matrix is factorized
//! by faer's sparse LU (symbolic analysis reused while the row pattern is unchanged).
//! A world keeps the factors of its last full Newton iteration: a step that continues
//! one with the same rows first tries chord steps with them, and a step whose
//! iterations contract quadratically ends with one ([`SolverSettings::reuse_factors`]).
//! Contacts are found once per step at the start-of-step poses (`axion-collision`)
//! and enter as position-level Fischer–Burmeister rows with exact Coulomb friction
//! (projection residual, semismooth Newton). See [`newton`] for the equations and
//! `docs/step.md` for the design.

pub mod newton;
pub mod reduced;
pub mod settings;
pub mod sparse;
pub mod tree;

use std::collections::HashMap;

use axion_collision::{CollisionWorld, Contact};
use axion_constraints::contact::{PERSIST_COS, PERSIST_DISTANCE};
use axion_math::Pose;
use axion_model::{Backend, Control, Model, State, StepError, StepReport, StepStats};
use nalgebra::Vector3;
use rayon::prelude::*;

pub use settings::{
    ABANDON_AFTER, COMPLIANT_CONTACTS, CREEP_KEPT_ABOVE, DEFAULT_CONTACT_SMOOTHING, FALLBACK_CREEP,
    FRICTION_CREEP, Integrator, MAX_SPLIT_DEPTH, SolverSettings,
};

/// The worker threads a batch of worlds is stepped on with [`SolverSettings::threads`]
/// = 0, the default: rayon's pool, one per core unless `RAYON_NUM_THREADS` says
/// otherwise.
pub fn default_threads() -> usize {
    rayon::current_num_threads()
}

use newton::{ActiveLimit, Layout, StepInput, WorldSolver};
use sparse::SparseLu;

/// What is cached for one model structure: the collision world, one pool of
/// factorizations per worker thread, and each world's previous step (its contacts and
/// limits, and the factorization of its row pattern).
struct Cache {
    /// The id of the model last stepped with this cache ([`Model::id`]).
    model_id: u64,
    layout: Layout,
    shape_count: usize,
    collision: CollisionWorld,
    workers: Vec<Factorizations>,
    /// Per world, what the previous step ended with.
    previous: Vec<Previous>,
    /// Per world with varied masses ([`Control::set_body_mass`]): the masses and the
    /// model copy that carries them.
    varied: Vec<Option<(Vec<Option<f64>>, Model)>>,
}

impl Cache {
    /// An empty cache for `model` with its collision shapes.
    fn new(model: &Model, collision: CollisionWorld) -> Self {
        Self {
            model_id: model.id(),
            layout: Layout::new(model),
            shape_count: model.bodies().iter().map(|b| b.shapes.len()).sum(),
            collision,
            workers: Vec::new(),
            previous: Vec::new(),
            varied: Vec::new(),
        }
    }
}

/// One reduced Newton system's LU per row pattern seen (the model's rows plus the contacts' body
/// pairs) and not held by a world ([`Previous`]), and the velocity projection's; owned by
/// one worker thread.
#[derive(Default)]
struct Factorizations {
    newton: HashMap<Vec<(usize, usize)>, reduced::ReducedLu>,
    projection: Option<SparseLu>,
}

impl Factorizations {
    /// Keeps the factorization of a step's attempt that was not kept, for its pattern.
    fn recycle(&mut self, previous: Previous) {
        if let Some(lu) = previous.lu {
            self.pool(previous.signature, lu);
        }
    }

    /// Keeps the factorization of a pattern for later steps (after clearing the pool
    /// if it holds [`MAX_PATTERNS`]).
    fn pool(&mut self, signature: Vec<(usize, usize)>, lu: reduced::ReducedLu) {
        if self.newton.len() >= MAX_PATTERNS {
            self.newton.clear();
        }
        self.newton.insert(signature, lu);
    }
}

/// A contact of the previous step: its forces (λ_n, λ_t1, λ_t2), the normal velocity
/// used for its restitution, and its points relative to the two centres of mass in
/// world axes (R local), at that step's start.
#[derive(Clone, Debug)]
struct PreviousContact {
    contact: Contact,
    forces: [f64; 3],
    approach: f64,
    arms: [Vector3<f64>; 2],
}

/// Where the contact touches ([`Contact::touching`]) relative to the centres of mass of
/// its bodies, in world axes.
fn lever_arms(c: &Contact, poses: &[Pose]) -> [Vector3<f64>; 2] {
    [
        poses[c.body_a.0].rotation * c.touching.local_a,
        poses[c.body_b.0].rotation * c.touching.local_b,
    ]
}

/// A world's previous step: its contacts, and its active joint limits with their forces,
/// its row pattern and that pattern's factorization (kept by the world while its pattern
/// lasts, then returned to its worker's pool, [`Factorizations::newton`]), the chord
/// steps' record, and
/// the poses and velocities it ended with (they carry over only into a step that starts
/// from them).
#[derive(Default)]
struct Previous {
    contacts: Vec<PreviousContact>,
    /// The contacts found beyond [`SolverSettings::row_margin`] and left out of the
    /// step (reported with no force).
    apart: Vec<Contact>,
    limits: Vec<(ActiveLimit, f64)>,
    signature: Vec<(usize, usize)>,
    lu: Option<reduced::ReducedLu>,
    chords: ChordRecord,
    /// Whether the step was solved with [`SolverSettings::fallback_creep`] and took more
    /// than [`CREEP_KEPT_ABOVE`] iterations: the next step starts with that creep
    /// ([`SolverSettings::keep_fallback_creep`]).
    creeping: bool,
    poses: Vec<Pose>,
    velocities: Vec<axion_math::Twist>,
}

impl Previous {
    /// What a second attempt at the same step starts from: the contacts and limits for
    /// its warm start, no factors.
    fn for_retry(&self) -> Self {
        Self {
            contacts: self.contacts.clone(),
            limits: self.limits.clone(),
            chords: self.chords,
            creeping: self.creeping,
            ..Self::default()
        }
    }

    /// Forgets the previous step unless `state`'s world `w` is where it ended (a state
    /// set by the caller — a reset, a world moved by hand — starts without warm starts
    /// and kept approach velocities: a ball placed at rest where a falling one was
    /// about to land must not bounce); returns the record forgotten, whose
    /// factorization can serve other steps.
    fn keep_if_continued(&mut self, state: &State, w: usize) -> Option<Self> {
        (self.poses != state.world_poses(w) || self.velocities != state.world_velocities(w))
            .then(|| std::mem::take(self))
    }
}

/// When a world tries its next chord steps at the start of a step
/// ([`SolverSettings::reuse_factors`]): after `n` failures in a row (a first chord step
/// that neither converged nor contracted the merit a hundredfold) it waits
/// $2^{\min(n, 6)} - 1$ steps, so a world whose kept factors have drifted too far
/// from its Newton matrix (a landing, a fast swing) pays for few of them; a step that
/// converges with at most one full Newton iteration ends the wait, as the robot has
/// come to rest (the a1 dropped limp waited up to 63 steps after its landing, each
/// taking a full iteration where a chord step converges: docs/step.md, "Chord steps on
/// kept factors").
#[derive(Clone, Copy, Debug, Default)]
struct ChordRecord {
    failures: u32,
    wait: u32,
}

impl ChordRecord {
    /// Whether this step may try one.
    fn ready(&self) -> bool {
        self.wait == 0
    }

    /// The record after a step that tried chord steps (`Some(contracting)`: whether the
    /// first converged or contracted the merit a hundredfold) or did not; `settled`:
    /// whether the step converged with at most one full Newton iteration.
    fn after(self, tried: Option<bool>, settled: bool) -> Self {
        match tried {
            Some(true) => Self::default(),
            Some(false) => {
                let failures = self.failures + 1;
                Self {
                    failures,
                    wait: (1 << failures.min(6)) - 1,
                }
            }
            None if settled => Self { wait: 0, ..self },
            None => Self {
                wait: self.wait.saturating_sub(1),
                ..self
            },
        }
    }
}

/// What one world's step produces.
struct WorldStep {
    result: newton::WorldResult,
    previous: Previous,
    /// Whether a contact or limit started from a force of the step before (a second
    /// attempt from zero forces would start elsewhere).
    warm_forces: bool,
}

impl WorldStep {
    /// This attempt, solved with [`SolverSettings::fallback_creep`] if `fallback`: said in
    /// its statistics, and (where it converged in more than [`CREEP_KEPT_ABOVE`]
    /// iterations) kept for the world's next step.
    fn crept(mut self, fallback: bool) -> Self {
        let stats = &mut self.result.stats;
        stats.fallback_creep = fallback;
        self.previous.creeping = fallback && stats.converged && stats.iterations > CREEP_KEPT_ABOVE;
        self
    }

    /// `other`, a second attempt at this step that converged, in its place: with this
    /// attempt's work added to its statistics, this attempt's record of chord steps,
    /// and no chord step next from `other`'s factors (those of a shorter step or
    /// another creep); this attempt's factorization goes back to `cache`.
    fn replaced_by(self, mut other: WorldStep, cache: &mut Factorizations) -> WorldStep {
        add_work(&mut other.result.stats, &self.result.stats);
        if let Some(lu) = other.previous.lu.as_mut() {
            lu.forget_factors();
        }
        other.previous.chords = self.previous.chords;
        cache.recycle(self.previous);
        other
    }
}

/// For each contact (lever arms `arms`), the previous step's contact it continues
/// ([`PERSIST_DISTANCE`]): same bodies, normals within [`PERSIST_COS`], a point within
/// the distance of where it sat relative to either body; one to one, the closest pairs
/// first (a foot's sphere and the box corners a few millimetres from it each keep their
/// own force, not the first one found nearby).
fn match_previous(
    contacts: &[Contact],
    arms: &[[Vector3<f64>; 2]],
    previous: &[PreviousContact],
) -> Vec<Option<usize>> {
    let mut by_bodies: HashMap<(usize, usize), Vec<usize>> = HashMap::new();
    for (k, p) in previous.iter().enumerate() {
        let c = &p.contact;
        by_bodies
            .entry((c.body_a.0, c.body_b.0))
            .or_default()
            .push(k);
    }
    // (distance, contact, previous contact) of every admissible pair.
    let mut pairs: Vec<(f64, usize, usize)> = Vec::new();
    for (i, (c, arms)) in contacts.iter().zip(arms).enumerate() {
        let Some(candidates) = by_bodies.get(&(c.body_a.0, c.body_b.0)) else {
            continue;
        };
        for &k in candidates {
            let p = &previous[k];
            let d = (p.arms[0] - arms[0])
                .norm()
                .min((p.arms[1] - arms[1]).norm());
            if d < PERSIST_DISTANCE && p.contact.point.normal.dot(&c.point.normal) > PERSIST_COS {
                pairs.push((d, i, k));
            }
        }
    }
    pairs.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
    let mut matched = vec![None; contacts.len()];
    let mut taken = vec![false; previous.len()];
    for (_, i, k) in pairs {
        if matched[i].is_none() && !taken[k] {
            matched[i] = Some(k);
            taken[k] = true;
        }
    }
    matched
}

/// The warm start `p` gives contact `c`: its force moved into `c`'s tangent frame, and
/// its approach velocity if it was still open then (the speculative contact closed the
/// gap in that step, so the impact speed is the one it had before).
fn persisted(c: &Contact, p: &PreviousContact) -> ([f64; 3], Option<f64>) {
    let pc = &p.contact;
    let l = p.forces;
    let friction = pc.frame.t1 * l[1] + pc.frame.t2 * l[2];
    let impact = (pc.gap > axion_constraints::contact::OPEN_GAP).then_some(p.approach);
    (
        [l[0], friction.dot(&c.frame.t1), friction.dot(&c.frame.t2)],
        impact,
    )
}

/// Adds the work of another attempt at a step (`other`'s iterations, chord steps,
/// backtracks and failed solves) to the statistics of the attempt kept.
fn add_work(stats: &mut StepStats, other: &StepStats) {
    stats.iterations += other.iterations;
    stats.chord_steps += other.chord_steps;
    stats.backtracks += other.backtracks;
    stats.failed_solves += other.failed_solves;
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

    /// A backend for `model` whose collision shapes `collision` are already built
    /// ([`CollisionWorld::new`] of the same model): its first step does not build them
    /// again (convex hulls of mesh robots take tens of milliseconds). A backend so made
    /// steps any model, as [`CpuBackend::new`]'s does.
    pub fn for_model(settings: SolverSettings, model: &Model, collision: CollisionWorld) -> Self {
        Self {
            settings,
            cache: Some(Cache::new(model, collision)),
        }
    }

    /// The settings.
    pub fn settings(&self) -> &SolverSettings {
        &self.settings
    }

    /// Builds (or keeps) the cache for `model`.
    fn prepare(&mut self, model: &Model) -> Result<(), StepError> {
        // The model the cache was last checked against (a model never changes once built).
        if self
            .cache
            .as_ref()
            .is_some_and(|c| c.model_id == model.id())
        {
            return Ok(());
        }
        let layout = Layout::new(model);
        let shape_count = model.bodies().iter().map(|b| b.shapes.len()).sum();
        if self
            .cache
            .as_ref()
            .is_some_and(|c| c.layout == layout && c.shape_count == shape_count)
        {
            self.cache.as_mut().expect("checked above").model_id = model.id();
            return Ok(());
        }
        let collision = CollisionWorld::new(model).map_err(|e| StepError::Unsupported {
            backend: self.name(),
            reason: e.to_string(),
        })?;
        self.cache = Some(Cache::new(model, collision));
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
        if self.settings.tree_solve {
            "cpu (f64, Newton solved along the bodies' tree, or by faer's sparse LU where they form loops)"
        } else {
            "cpu (f64, Newton with faer's sparse LU of the reduced system)"
        }
        .to_string()
    }

    /// The contacts the last step solved, their points placed with the poses the step
    /// ended with: each point $p_a = x_a + R_a\,\ell_a - t_a n$ and
    /// $p_b = x_b + R_b\,\ell_b + t_b n$ on the two surfaces, reported at
    /// $\tfrac12(p_a + p_b)$; the friction force is $\lambda_1 t_1 + \lambda_2 t_2$.
    fn contacts(&self, state: &State, world: usize) -> Option<Vec<axion_model::ContactForce>> {
        let previous = self.cache.as_ref()?.previous.get(world)?;
        let poses = &previous.poses;
        let continued = poses.as_slice() == state.world_poses(world)
            && previous.velocities.as_slice() == state.world_velocities(world);
        if poses.is_empty() || !continued {
            return None;
        }
        // The contacts solved with their forces, then those left out with none.
        let solved = previous.contacts.iter().map(|p| (&p.contact, p.forces));
        let apart = previous.apart.iter().map(|c| (c, [0.0; 3]));
        let contacts = solved
            .chain(apart)
            .map(|(c, forces)| {
                let n = c.point.normal;
                let on_a = poses[c.body_a.0] * nalgebra::Point3::from(c.point.local_a)
                    - n * c.point.thickness_a;
                let on_b = poses[c.body_b.0] * nalgebra::Point3::from(c.point.local_b)
                    + n * c.point.thickness_b;
                axion_model::ContactForce {
                    body_a: c.body_a,
                    body_b: c.body_b,
                    point: (on_a.coords + on_b.coords) * 0.5,
                    normal: n,
                    gap: c.gap,
                    normal_force: forces[0],
                    friction_force: c.frame.t1 * forces[1] + c.frame.t2 * forces[2],
                }
            })
            .collect();
        Some(contacts)
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
        let worlds = state.worlds();
        cache.varied.resize_with(worlds, || None);
        for (w, varied) in cache.varied.iter_mut().enumerate() {
            let masses = control.world_masses(w);
            if masses.iter().all(Option::is_none) {
                *varied = None;
            } else if varied.as_ref().is_none_or(|(m, _)| m != masses) {
                let model = model
                    .with_masses(masses)
                    .map_err(|e| StepError::Unsupported {
                        backend: "cpu".into(),
                        reason: format!("the masses of world {w}: {e}"),
                    })?;
                *varied = Some((masses.to_vec(), model));
            }
        }
        let threads = match settings.threads {
            0 => default_threads(),
            n => n,
        }
        .clamp(1, worlds.max(1));
        if cache.workers.len() < threads {
            cache.workers.resize_with(threads, Factorizations::default);
        }
        // Contiguous blocks of worlds, one per worker; each world is solved on its own.
        let per_worker = worlds.div_ceil(threads).max(1);
        cache.previous.resize_with(worlds, Previous::default);
        for (w, previous) in cache.previous.iter_mut().enumerate() {
            // A world set anew gives its factorization to the pool of its worker (a
            // reset world meets the same rows again, without their analysis).
            if let Some(forgotten) = previous.keep_if_continued(state, w) {
                cache.workers[w / per_worker].recycle(forgotten);
            }
        }
        let (layout, collision) = (&cache.layout, &cache.collision);
        let varied = &cache.varied;
        let state_ref: &State = state;
        let job = |first: usize, factorizations: &mut Factorizations, previous: &mut [Previous]| {
            previous
                .iter_mut()
                .enumerate()
                .map(|(i, previous)| {
                    let w = first + i;
                    let world = WorldJob {
                        model: varied[w].as_ref().map_or(model, |(_, m)| m),
                        layout,
                        collision,
                        settings: &settings,
                        start: WorldStart {
                            poses: state_ref.world_poses(w),
                            velocities: state_ref.world_velocities(w),
                            joint_forces: state_ref.joint_forces(w),
                            drive_forces: state_ref.drive_forces(w),
                        },
                        control,
                        h,
                        world: w,
                        abandon_after: 0,
                    };
                    world.step(
                        previous,
                        factorizations,
                        settings.split_depth.min(MAX_SPLIT_DEPTH),
                    )
                })
                .collect::<Vec<WorldStep>>()
        };
        let steps: Vec<WorldStep> = if threads == 1 {
            job(0, &mut cache.workers[0], &mut cache.previous)
        } else {
            // Blocks run on rayon's pool (no thread is started per step); collecting the
            // indexed blocks keeps the worlds in order.
            let blocks: Vec<Vec<WorldStep>> = cache.workers[..threads]
                .par_iter_mut()
                .zip(cache.previous.par_chunks_mut(per_worker))
                .enumerate()
                .map(|(k, (f, p))| job(k * per_worker, f, p))
                .collect();
            blocks.into_iter().flatten().collect()
        };
        let mut report = StepReport::default();
        let layout = &cache.layout;
        for (w, step) in steps.into_iter().enumerate() {
            let result = step.result;
            let world = state.world_mut(w);
            world.poses.copy_from_slice(&result.poses);
            world.velocities.copy_from_slice(&result.velocities);
            let (jr, dr) = (layout.joint_rows, world.drive_forces.len());
            world.joint_forces.copy_from_slice(&result.lambda[..jr]);
            world
                .drive_forces
                .copy_from_slice(&result.lambda[jr..jr + dr]);
            cache.previous[w] = Previous {
                poses: result.poses.clone(),
                velocities: result.velocities.clone(),
                ..step.previous
            };
            report.worlds.push(result.stats);
        }
        state.advance_time(h);
        Ok(report)
    }
}

/// Where one world's step starts: poses, velocities, and the joint and drive forces
/// of the step before (the warm start).
#[derive(Clone, Copy)]
struct WorldStart<'a> {
    poses: &'a [Pose],
    velocities: &'a [axion_math::Twist],
    joint_forces: &'a [f64],
    drive_forces: &'a [f64],
}

/// Everything one world's step reads.
#[derive(Clone, Copy)]
struct WorldJob<'a> {
    model: &'a Model,
    layout: &'a Layout,
    collision: &'a CollisionWorld,
    settings: &'a SolverSettings,
    start: WorldStart<'a>,
    control: &'a Control,
    h: f64,
    world: usize,
    /// Full steps without a new lowest merit after which this attempt ends (0: never;
    /// [`SolverSettings::abandon_after`], for a first attempt that a compliant retry
    /// follows).
    abandon_after: usize,
}

impl WorldJob<'_> {
    /// Solves the world's step ([`solve`](Self::solve)); one that does not converge is
    /// solved again from the same start with the larger creep
    /// [`SolverSettings::fallback_creep`] (and compliant contacts,
    /// [`SolverSettings::compliant_retries`]), then, if that does not converge either and
    /// the step was warm-started with contact or limit forces
    /// ([`SolverSettings::contact_persistence`]), with the larger of the two creeps from
    /// zero contact and limit forces, then as two steps of half the length, each of
    /// them solved so in turn while `splits` allow ([`SolverSettings::split_depth`]). A
    /// second attempt's result is kept if it converges (every part of a split);
    /// otherwise the first attempt's. The statistics count every iteration of every
    /// attempt; the residuals are those of the result kept.
    fn step(
        &self,
        previous: &mut Previous,
        cache: &mut Factorizations,
        splits: usize,
    ) -> WorldStep {
        let settings = self.settings;
        let creeping = SolverSettings {
            friction_creep: settings.fallback_creep.max(settings.friction_creep),
            ..*settings
        };
        let cold = SolverSettings {
            contact_persistence: false,
            ..creeping
        };
        // The second attempts' contacts (SolverSettings::compliant_retries).
        let retried = |s: SolverSettings| {
            if settings.compliant_retries {
                s.compliant_contacts()
            } else {
                s
            }
        };
        let (creeping_retry, cold) = (retried(creeping), retried(cold));
        // A step after one that needed the fallback creep starts with it
        // (SolverSettings::keep_fallback_creep).
        let can_creep = settings.fallback_creep > settings.friction_creep;
        let sticky = can_creep && settings.keep_fallback_creep && previous.creeping;
        // The retry with the larger creep and compliant contacts follows a first attempt
        // that does not start with that creep: that attempt may end early.
        let first = WorldJob {
            settings: if sticky { &creeping } else { settings },
            abandon_after: if can_creep && !sticky && settings.compliant_retries {
                settings.abandon_after
            } else {
                0
            },
            ..*self
        };
        let mut whole = first.solve(previous, cache).crept(sticky);
        // The second attempts at the whole step, in order (both with the larger creep,
        // where there is one).
        let retries = [
            (can_creep && !sticky).then_some(&creeping_retry),
            whole.warm_forces.then_some(&cold),
        ];
        if whole.result.stats.converged || (retries == [None, None] && splits == 0) {
            return whole;
        }
        // `solve` took only the kept factors from `previous`: its contacts and limits
        // still warm-start a second attempt (the one from zero forces takes only their
        // approach velocities).
        let mut before = previous.for_retry();
        for settings in retries.into_iter().flatten() {
            let job = WorldJob { settings, ..*self };
            let again = job.solve(&mut before.for_retry(), cache).crept(can_creep);
            if again.result.stats.converged {
                return whole.replaced_by(again, cache);
            }
            add_work(&mut whole.result.stats, &again.result.stats);
            cache.recycle(again.previous);
        }
        if splits == 0 {
            return whole;
        }
        let half = WorldJob {
            h: 0.5 * self.h,
            ..*self
        };
        let first = half.step(&mut before, cache, splits - 1);
        let first_stats = first.result.stats;
        if !first_stats.converged {
            // The split result could not be kept: no need for its second half.
            add_work(&mut whole.result.stats, &first_stats);
            cache.recycle(first.previous);
            return whole;
        }
        let jr = self.layout.joint_rows;
        let dr = self.start.drive_forces.len();
        let lambda = &first.result.lambda;
        let second_half = WorldJob {
            start: WorldStart {
                poses: &first.result.poses,
                velocities: &first.result.velocities,
                joint_forces: &lambda[..jr],
                drive_forces: &lambda[jr..jr + dr],
            },
            ..half
        };
        let mut middle = first.previous.for_retry();
        let second = second_half.step(&mut middle, cache, splits - 1);
        cache.recycle(first.previous);
        let second_stats = second.result.stats;
        if second_stats.converged {
            let mut kept = whole.replaced_by(second, cache);
            kept.result.stats.substeps = first_stats.substeps + second_stats.substeps;
            kept.result.stats.fallback_creep |= first_stats.fallback_creep;
            add_work(&mut kept.result.stats, &first_stats);
            kept
        } else {
            add_work(&mut whole.result.stats, &first_stats);
            add_work(&mut whole.result.stats, &second_stats);
            cache.recycle(second.previous);
            whole
        }
    }

    /// Detects the world's contacts, warm-starts from `previous`, and solves its step
    /// with the contacts within [`SolverSettings::row_margin`]; where one of the others
    /// has come within half that distance at its end, solves it again with every contact
    /// found (the statistics count both).
    fn solve(&self, previous: &mut Previous, cache: &mut Factorizations) -> WorldStep {
        let (mut step, reached) = self.solve_rows(previous, cache, true);
        if !reached {
            return step;
        }
        // The first solve took the kept factorization: give it back, with its pattern, so
        // that it goes to the worker's pool.
        previous.lu = step.previous.lu.take();
        previous.signature = std::mem::take(&mut step.previous.signature);
        let (mut again, _) = self.solve_rows(previous, cache, false);
        add_work(&mut again.result.stats, &step.result.stats);
        again
    }

    /// [`solve`](Self::solve) with the contacts within the row margin if `near_only`,
    /// else with every contact found; also says whether a contact left out came within
    /// half the row margin.
    fn solve_rows(
        &self,
        previous: &mut Previous,
        cache: &mut Factorizations,
        near_only: bool,
    ) -> (WorldStep, bool) {
        let (settings, layout, h, w) = (self.settings, self.layout, self.h, self.world);
        let q0 = self.start.poses;
        let u0 = self.start.velocities;
        // Speculative margin: the settings' margin plus two steps of the fastest body.
        let speed = u0
            .iter()
            .map(|u| axion_math::linear(u).norm())
            .fold(0.0, f64::max);
        // Room for as many contacts as the step before found.
        let mut contacts = Vec::with_capacity(previous.contacts.len() + previous.apart.len());
        self.collision.detect_ahead(
            q0,
            Some((u0, h)),
            settings.contact_margin + 2.0 * h * speed,
            &mut contacts,
        );
        if let Some(mu) = self.control.friction(w) {
            for c in &mut contacts {
                c.cone = c.cone.with_coefficient(mu).expect("checked by Control");
            }
        }
        let limits = ActiveLimit::find(self.model, q0, u0, h, settings.contact_margin);
        let integrator = if contacts.is_empty() && limits.is_empty() {
            settings.integrator
        } else {
            Integrator::BackwardEuler
        };
        let mut warm = Vec::with_capacity(
            self.start.joint_forces.len()
                + self.start.drive_forces.len()
                + 3 * contacts.len()
                + limits.len(),
        );
        warm.extend_from_slice(self.start.joint_forces);
        warm.extend_from_slice(self.start.drive_forces);
        // Contacts beyond the row margin are left out of the system and checked after it.
        let mut apart = Vec::new();
        if near_only && 0.0 < settings.row_margin && settings.row_margin < settings.contact_margin {
            let reach = settings.row_margin + 2.0 * h * speed;
            (contacts, apart) = contacts.into_iter().partition(|c| c.gap <= reach);
        }
        let mut approach = Vec::with_capacity(contacts.len());
        // Whether a contact or limit starts from a force of the step before.
        let mut warm_forces = false;
        let arms: Vec<_> = contacts.iter().map(|c| lever_arms(c, q0)).collect();
        let matched = match_previous(&contacts, &arms, &previous.contacts);
        for (c, m) in contacts.iter().zip(matched) {
            let (a, b) = (c.body_a.0, c.body_b.0);
            let now = c
                .touching
                .normal_jacobian(&q0[a], &q0[b])
                .dot(&u0[a], &u0[b]);
            let found = m.map(|k| persisted(c, &previous.contacts[k]));
            approach.push(
                found
                    .and_then(|(_, impact)| impact)
                    .map_or(now, |v| v.min(now)),
            );
            let forces = found
                .map(|(l, _)| l)
                .filter(|_| settings.contact_persistence)
                .unwrap_or([0.0; 3]);
            warm_forces |= forces != [0.0; 3];
            warm.extend(forces);
        }
        for l in &limits {
            let before = previous
                .limits
                .iter()
                .find(|(p, _)| p.joint == l.joint && p.side == l.side)
                .filter(|_| settings.contact_persistence)
                .map_or(0.0, |&(_, lambda)| lambda);
            warm_forces |= before != 0.0;
            warm.push(before);
        }
        let input = StepInput {
            model: self.model,
            layout,
            settings,
            h,
            q0,
            u0,
            control: self.control,
            world: w,
            contacts: &contacts,
            approach: &approach,
            limits: &limits,
            integrator,
            abandon_after: self.abandon_after,
        };
        let mut solver = WorldSolver::new(input);
        // The row pattern: the contacts' body pairs, then the limited joints (marked
        // apart from body indices).
        let signature: Vec<(usize, usize)> = contacts
            .iter()
            .map(|c| (c.body_a.0, c.body_b.0))
            .chain(limits.iter().map(|l| (usize::MAX, l.joint)))
            .collect();
        // A step continuing one with the same rows may start with chord steps on the
        // factors the world kept (SolverSettings::reuse_factors). (A world whose state was
        // set anew has a default record: no rows, no factors.)
        let reuse =
            settings.reuse_factors && previous.chords.ready() && previous.signature == signature;
        // The world keeps the factorization of its last row pattern (its factors serve
        // the chord steps); one of another pattern goes back to the worker's pool.
        let mut lu = None;
        if let Some(kept) = previous.lu.take() {
            if previous.signature == signature {
                lu = Some(kept);
            } else {
                cache.pool(std::mem::take(&mut previous.signature), kept);
            }
        }
        // One from the pool was factorized for another world: its factors must not serve
        // this world's chord step (nor make the results depend on the thread count).
        let mut lu = lu.or_else(|| {
            let mut pooled = cache.newton.remove(&signature)?;
            pooled.forget_factors();
            Some(pooled)
        });
        let projection = if integrator == Integrator::EnergyMomentum {
            let armatures = self
                .model
                .joints()
                .iter()
                .filter(|j| j.armature.is_some())
                .count();
            let n = 6 * layout.dyn_bodies.len() + layout.joint_rows + armatures;
            Some(
                cache
                    .projection
                    .get_or_insert_with(|| SparseLu::new(n, &solver.projection_pattern())),
            )
        } else {
            None
        };
        let mut result = solver.solve(&warm, reuse, &mut lu, projection);
        result.stats.contact_count += apart.len();
        let first_contact = layout.joint_rows + self.start.drive_forces.len();
        let first_limit = first_contact + 3 * contacts.len();
        let forces = result.lambda[first_contact..first_limit].chunks_exact(3);
        let contacts = contacts
            .iter()
            .zip(forces)
            .zip(approach.iter().zip(arms))
            .map(|((c, l), (v, arms))| PreviousContact {
                contact: *c,
                forces: [l[0], l[1], l[2]],
                approach: *v,
                arms,
            })
            .collect();
        let limits = limits
            .into_iter()
            .zip(result.lambda[first_limit..].iter().copied())
            .collect();
        let reached = apart.iter().any(|c| {
            let poses = &result.poses;
            c.point.gap(&poses[c.body_a.0], &poses[c.body_b.0]) <= 0.5 * settings.row_margin
        });
        let stats = &result.stats;
        let settled = stats.converged && stats.iterations - stats.chord_steps <= 1;
        let chords = previous.chords.after(result.chord, settled);
        let step = WorldStep {
            result,
            warm_forces,
            previous: Previous {
                contacts,
                apart,
                limits,
                signature,
                lu,
                chords,
                ..Previous::default()
            },
        };
        (step, reached)
    }
}

#[cfg(test)]
mod tests {
    use super::ChordRecord;

    /// Failures in a row wait 1, 3, 7, … steps; a step that tries no chord step counts
    /// one off; a settled step (converged with at most one full Newton iteration) ends
    /// the wait without forgetting the failures; a first chord step that converges or
    /// contracts clears the record.
    #[test]
    fn a_settled_step_ends_the_wait_for_chord_steps() {
        let failed = |r: ChordRecord| r.after(Some(false), false);
        let twice = failed(failed(ChordRecord::default()));
        assert_eq!((twice.failures, twice.wait), (2, 3));
        let moving = twice.after(None, false);
        assert_eq!(moving.wait, 2);
        assert!(!moving.ready());
        let settled = twice.after(None, true);
        assert!(settled.ready());
        assert_eq!(
            failed(settled).wait,
            7,
            "the next failure waits longer still"
        );
        let contracted = settled.after(Some(true), true);
        assert_eq!((contracted.failures, contracted.wait), (0, 0));
    }
}
