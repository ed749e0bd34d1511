//! Contacts found within `contact_margin` but beyond `SolverSettings::row_margin` are
//! left out of the step's Newton system and checked at its end: a step that reaches one
//! is solved again with every contact, and one that does not leaves the motion as the
//! full system would, but for the smoothing's float force of the contacts left out.

use axion::prelude::*;
use axion::{Geometry, math::twist};
use nalgebra::{Point3, Vector3};

const H: f64 = 0.01;

/// Flat ground and 1 m rods of 1 kg (10 cm square section), lying level with their
/// centres where `rods` says.
fn rods_on_ground(rods: &[(&str, Vector3<f64>)]) -> axion::Model {
    let mut b = ModelBuilder::new();
    b.add_body(
        BodyDesc::fixed("ground").shape(ShapeDesc::from_geometry(Geometry::HalfSpace {
            normal: Vector3::z(),
        })),
    )
    .unwrap();
    let rod = Shape::Box {
        half_extents: Vector3::new(0.5, 0.05, 0.05),
    };
    for &(name, centre) in rods {
        b.add_body(
            BodyDesc::dynamic(name)
                .at(centre)
                .mass(1.0, Vector3::zeros(), rod.unit_inertia(1.0))
                .shape(ShapeDesc::new(rod)),
        )
        .unwrap();
    }
    b.build().unwrap()
}

/// The lowest of the rod's eight corners (m above the ground).
fn lowest_corner(sim: &Simulator) -> f64 {
    let rod = sim.model().body_id("rod").unwrap();
    let pose = sim.state().com_pose(0, rod);
    let mut lowest = f64::INFINITY;
    for x in [-0.5, 0.5] {
        for y in [-0.05, 0.05] {
            for z in [-0.05, 0.05] {
                lowest = lowest.min((pose * Point3::new(x, y, z)).z);
            }
        }
    }
    lowest
}

fn simulator(model: axion::Model, row_margin: f64) -> Simulator {
    let settings = SolverSettings {
        row_margin,
        ..SolverSettings::default()
    };
    Simulator::new(model, 1, H, BackendChoice::CpuWith(settings)).unwrap()
}

/// The rod hovers 5 mm up, not moving but spinning at 3 rad/s about its short axis, so
/// that one end comes down 15 mm in the step: its corners, beyond the 2 mm row margin
/// (its centre does not move, so two steps of travel add nothing), are left out of the
/// first solve, which sinks that end into the ground; the check at the end of the step
/// sees it and solves the step again with them. The step ends on the ground, not in it,
/// and exactly where the solve with every contact found ends.
#[test]
fn a_corner_beyond_the_row_margin_that_the_step_reaches_is_solved_with_it() {
    let settings = SolverSettings::default();
    let clearance = 0.005;
    assert!(clearance > settings.row_margin && clearance < settings.contact_margin);
    let spin = twist(Vector3::zeros(), Vector3::new(0.0, 3.0, 0.0));
    let step = |row_margin: f64| {
        let model = rods_on_ground(&[("rod", Vector3::new(0.0, 0.0, 0.05 + clearance))]);
        let mut sim = simulator(model, row_margin);
        let rod = sim.model().body_id("rod").unwrap();
        sim.state_mut().set_velocity(0, rod, spin);
        let iterations = sim.step().unwrap().worlds[0].iterations;
        (sim, iterations)
    };
    let (pruned, pruned_iterations) = step(settings.row_margin);
    let (full, full_iterations) = step(settings.contact_margin);
    let rod = pruned.model().body_id("rod").unwrap();
    let lowest = lowest_corner(&pruned);
    println!(
        "lowest corner {lowest:.3e} m; iterations {pruned_iterations} (both solves) against {full_iterations}"
    );
    assert!(lowest > -1e-7, "an end sank {lowest} m into the ground");
    assert!(lowest < 1e-3, "the end came down onto the ground: {lowest}");
    let (a, b) = (
        pruned.state().com_pose(0, rod),
        full.state().com_pose(0, rod),
    );
    assert!((a.translation.vector - b.translation.vector).norm() < 1e-12);
    assert!(a.rotation.angle_to(&b.rotation) < 1e-12);
    assert!(
        pruned_iterations > full_iterations,
        "the statistics count both solves"
    );
}

/// The rod at rest 1 cm above the ground, and a second one lying on the ground 1 cm
/// beside it: for 50 steps the rod falls and lands while the contacts between it and its
/// neighbour stay a centimetre apart. Solved (row margin 2 cm), they carry the
/// smoothing's float force, above zero and below a micronewton; left out (row margin
/// 2 mm), they are reported with no force, and the rods' motion differs by less than
/// 1e-9 m.
#[test]
fn contacts_that_stay_apart_leave_the_motion_as_it_was() {
    let settings = SolverSettings::default();
    let run = |row_margin: f64| {
        let model = rods_on_ground(&[
            ("rod", Vector3::new(0.0, 0.0, 0.06)),
            ("neighbour", Vector3::new(0.0, 0.11, 0.05)),
        ]);
        let mut sim = simulator(model, row_margin);
        let s = sim.run(50).unwrap();
        assert_eq!(s.converged_steps, s.steps);
        // The largest normal force between the two rods.
        let ground = sim.model().body_id("ground").unwrap();
        let between = (sim.contacts(0).unwrap().iter())
            .filter(|c| c.body_a != ground && c.body_b != ground)
            .map(|c| c.normal_force)
            .fold(f64::NAN, f64::max);
        (sim, between)
    };
    let (pruned, left_out) = run(settings.row_margin);
    let (full, solved) = run(settings.contact_margin);
    let mut largest = 0.0f64;
    for name in ["rod", "neighbour"] {
        let body = pruned.model().body_id(name).unwrap();
        let (a, b) = (
            pruned.state().com_pose(0, body),
            full.state().com_pose(0, body),
        );
        largest = largest.max((a.translation.vector - b.translation.vector).norm());
    }
    println!(
        "force between the rods {left_out:.1e} N left out, {solved:.1e} N solved; poses apart by {largest:.1e} m"
    );
    assert!(largest < 1e-9, "the poses differ by {largest} m");
    let rod = pruned.model().body_id("rod").unwrap();
    let z = pruned.state().com_pose(0, rod).translation.vector.z;
    assert!((z - 0.05).abs() < 1e-6, "the rod landed: z = {z}");
    assert_eq!(left_out, 0.0, "the contacts left out carry no force");
    assert!(
        solved > 0.0 && solved < 1e-6,
        "the solved ones float: {solved} N"
    );
}
