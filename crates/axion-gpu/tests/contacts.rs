//! The GPU step against the CPU reference on the contact scenes of SCENES.md that touch
//! only the ground (drop, incline, thrown box, anisotropic box).

mod common;

use axion::scenes;
use axion_model::{BodyId, Control};
use nalgebra::Vector3;

#[test]
fn drop_matches_cpu() {
    let model = scenes::drop(0.0).unwrap();
    for h in [0.01, 0.05] {
        if let Some(p) = common::run(&format!("drop h={h}"), &model, h, 1.0) {
            common::check(&p, "drop");
        }
    }
}

#[test]
fn incline_matches_cpu() {
    for deg in [20.0f64, 35.0] {
        let model = scenes::incline(deg.to_radians(), 0.5).unwrap();
        for h in [0.01, 0.05] {
            if let Some(p) = common::run(&format!("incline {deg}° h={h}"), &model, h, 1.0) {
                println!("  cube at x = {:.6} m", p.final_positions[1][0]);
                common::check(&p, "incline");
            }
        }
    }
}

#[test]
fn thrown_box_matches_cpu() {
    let model = scenes::thrown_box(3.0, 0.5).unwrap();
    for h in [0.01, 0.05] {
        if let Some(p) = common::run(&format!("thrown box h={h}"), &model, h, 1.0) {
            println!("  cube at x = {:.6} m", p.final_positions[1][0]);
            common::check(&p, "thrown box");
        }
    }
}

/// The 100:1 anisotropic cube pushed with 5 N: along its grippy axis it sticks, along
/// its slippery axis it slides; the GPU decides the same and ends where the CPU does.
#[test]
fn anisotropic_box_matches_cpu() {
    let model = scenes::anisotropic_box().unwrap();
    for (axis, what) in [(0, "slides"), (1, "sticks")] {
        let mut control = Control::new(&model, 1);
        let mut force = Vector3::zeros();
        force[axis] = 5.0;
        control.set_wrench(0, BodyId(1), force, Vector3::zeros());
        for h in [0.01, 0.05] {
            let name = format!("anisotropic box pushed along axis {axis} ({what}) h={h}");
            if let Some(p) = common::run_controlled(&name, &model, &control, h, 1.0) {
                println!("  cube at {:?}", p.final_positions[1]);
                common::check(&p, &name);
            }
        }
    }
}

/// SCENES.md rows 4 and 8: stacks of 5 and 10 unit cubes and the 1000:1 mass ratio
/// stay where they are on the GPU as on the CPU.
#[test]
fn stacks_match_cpu() {
    for (name, model) in [
        ("stack of 5", scenes::stack(5).unwrap()),
        ("stack of 10", scenes::stack(10).unwrap()),
        ("mass ratio 1000:1", scenes::mass_ratio().unwrap()),
    ] {
        for h in [0.01, 0.05] {
            let name = format!("{name} h={h}");
            if let Some(p) = common::run(&name, &model, h, 1.0) {
                common::check(&p, &name);
            }
        }
    }
}
