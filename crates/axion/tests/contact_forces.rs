//! Contact forces as the user reads them: what a resting body's contacts carry balances
//! its weight, a sliding body's friction is μ N against its motion, and each body of
//! a resting stack is in equilibrium under its contact wrench and gravity.

use axion::prelude::*;
use axion::scenes;
use nalgebra::Vector3;

const G: f64 = 9.81;

/// A 1 kg cube resting on level ground: its contacts' normal forces sum to m g, carry
/// no friction, lie on the ground's surface, and give no torque about its centre.
#[test]
fn a_resting_cube_is_carried_by_its_weight() {
    let mut sim = Simulator::new(
        scenes::incline(0.0, 0.5).unwrap(),
        1,
        0.01,
        BackendChoice::Cpu,
    )
    .unwrap();
    assert!(
        sim.contacts(0).is_none(),
        "no contacts before the first step"
    );
    sim.run(20).unwrap();
    let cube = sim.model().body_id("cube").unwrap();
    let contacts = sim.contacts(0).expect("the CPU backend keeps its contacts");
    assert_eq!(contacts.len(), 4, "the four corners of the bottom face");
    let mut total = Vector3::zeros();
    for c in &contacts {
        assert!(c.normal_force >= 0.0);
        assert!(c.friction_force.norm() < 1e-9, "{:?}", c.friction_force);
        assert!(
            c.point.z.abs() < 1e-6,
            "on the ground's surface: {}",
            c.point.z
        );
        total += if c.body_a == cube {
            c.force_on_a()
        } else {
            -c.force_on_a()
        };
    }
    assert!((total - Vector3::new(0.0, 0.0, G)).norm() < 1e-9, "{total}");
    let w = sim.contact_wrenches(0).unwrap()[cube.0];
    assert!((w.fixed_rows::<3>(0) - Vector3::new(0.0, 0.0, G)).norm() < 1e-9);
    assert!(w.fixed_rows::<3>(3).norm() < 1e-9, "no torque: {w}");
    let v = sim.state().velocity(0, cube);
    sim.state_mut().set_velocity(
        0,
        cube,
        v + axion::math::twist(Vector3::x(), Vector3::zeros()),
    );
    assert!(
        sim.contacts(0).is_none(),
        "a moved world has no step's contacts to show"
    );
    sim.state_mut().set_velocity(0, cube, v);
    sim.reset().unwrap();
    assert!(
        sim.contacts(0).is_none(),
        "a reset forgets the last step's contacts"
    );
}

/// A cube sliding down a 0.5 rad slope (tan = 0.546) with μ = 0.3: the normal forces
/// sum to m g cos θ, and the friction is μ N, pointing up the slope against the motion.
#[test]
fn a_sliding_cube_feels_mu_n_against_its_motion() {
    let (angle, mu): (f64, f64) = (0.5, 0.3);
    let mut sim = Simulator::new(
        scenes::incline(angle, mu).unwrap(),
        1,
        0.01,
        BackendChoice::Cpu,
    )
    .unwrap();
    sim.run(50).unwrap();
    let cube = sim.model().body_id("cube").unwrap();
    assert!(
        sim.state().velocity(0, cube)[0] > 0.5,
        "the cube slides along +x"
    );
    let (mut normal, mut friction) = (0.0, Vector3::zeros());
    for c in &sim.contacts(0).unwrap() {
        let sign = if c.body_a == cube { 1.0 } else { -1.0 };
        normal += c.normal_force;
        friction += sign * c.friction_force;
    }
    let n = G * angle.cos();
    assert!(
        (normal - n).abs() < 1e-9 * n,
        "N = {normal}, m g cos θ = {n}"
    );
    assert!(
        (friction - Vector3::new(-mu * n, 0.0, 0.0)).norm() < 1e-9 * n,
        "{friction}"
    );
}

/// Three stacked cubes at rest: for every cube the contact wrench balances gravity,
/// the force within 1e-9 N and the torque within 1e-9 N·m.
#[test]
fn every_cube_of_a_resting_stack_is_in_equilibrium() {
    let mut sim = Simulator::new(scenes::stack(3).unwrap(), 1, 0.01, BackendChoice::Cpu).unwrap();
    sim.run(50).unwrap();
    let wrenches = sim.contact_wrenches(0).unwrap();
    for (b, body) in sim.model().bodies().iter().enumerate() {
        if !body.is_dynamic() {
            continue;
        }
        let weight = sim.model().gravity() * body.mass.mass();
        let w = wrenches[b];
        assert!(
            (w.fixed_rows::<3>(0) + weight).norm() < 1e-9,
            "{}: {w}",
            body.name
        );
        assert!(w.fixed_rows::<3>(3).norm() < 1e-9, "{}: {w}", body.name);
    }
}
