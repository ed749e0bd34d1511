//! Joint ranges on the GPU against the CPU reference (the scenes of `axion`'s
//! `tests/limits.rs`): one-sided rows on the joint coordinate that stop a joint at its
//! bound and hold it there.

mod common;

use axion::scenes;

/// The pendulum falling onto its upper bound (0.6 rad), a slider falling onto its
/// lower bound (−0.5 m) and a hinge driven against the far side of a range that
/// crosses ±π, [2.5, 3.5] rad, for 1 s: the GPU's bodies end where the CPU's do
/// (within 1 mm and 1 mrad, resting on the bound), joint errors stay at f32 level and
/// every step converges, at h = 0.01 and 0.05.
///
/// At h = 0.05 the pendulum's impact on its bound takes 29 Newton iterations on
/// lavapipe (the CPU: 8), one below the cap of 30 (docs/gpu.md): its bob is a point
/// mass (inertia 1e-6 kg·m²) and the iteration converges linearly there.
#[test]
fn joints_stop_at_their_bounds_as_on_the_cpu() {
    for (name, model) in [
        (
            "pendulum onto its bound",
            scenes::pendulum_with(|hinge| hinge.limits(scenes::range(-0.3, 0.6))).unwrap(),
        ),
        ("slider onto its bound", scenes::slider_on_bound().unwrap()),
        (
            "hinge driven against a range across π",
            scenes::turnstile_across_pi().unwrap(),
        ),
    ] {
        for h in [0.01, 0.05] {
            let name = format!("{name} h={h}");
            if let Some(p) = common::run(&name, &model, h, 1.0) {
                println!("  bodies at {:?}", p.final_positions);
                common::check(&p, &name);
            }
        }
    }
}
