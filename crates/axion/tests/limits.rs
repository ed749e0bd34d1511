//! Joint ranges (URDF `<limit lower upper>`): one-sided position-level rows on the joint
//! coordinate. A joint stops at its bound without passing it, rests there, and a range
//! the motion never approaches changes nothing.

use axion::Model;
use axion::constraints::drive::coordinate;
use axion::math::Pose;
use axion::prelude::*;

const STEPS: [f64; 2] = [0.01, 0.05];

/// The built-in pendulum (1 kg on a 1 m link about y, released horizontal; falling is
/// the positive angle) with the given range.
fn pendulum(lower: f64, upper: f64) -> Model {
    axion::scenes::pendulum_with(|hinge| hinge.limits(axion::scenes::range(lower, upper))).unwrap()
}

/// Joint 0's coordinate measured as its range measures it (rad or m, with the bounds
/// at `lower` and `upper` even for a range that crosses ±π).
fn coordinate_of(sim: &Simulator) -> f64 {
    let mj = &sim.model().joints()[0];
    let range = mj.range().expect("a range");
    let parent = mj
        .parent
        .map_or(Pose::identity(), |p| sim.state().com_pose(0, p));
    let child = sim.state().com_pose(0, mj.child);
    let c = coordinate(
        range.coordinate,
        &mj.joint.frames,
        &range.axis,
        &parent,
        &child,
    );
    range.relative(c.value) + range.reference()
}

/// The pendulum falls onto its upper bound (0.6 rad below horizontal), never passes
/// it by more than 1e-9 rad, and comes to rest on it (backward Euler: a plastic stop).
#[test]
fn hinge_stops_at_its_bound_and_rests_there() {
    for h in STEPS {
        let mut sim = Simulator::new(pendulum(-0.3, 0.6), 1, h, BackendChoice::Cpu).unwrap();
        let mut deepest = f64::NEG_INFINITY;
        let s = sim
            .run_with((2.0 / h) as usize, |s| {
                deepest = deepest.max(coordinate_of(s) - 0.6);
            })
            .unwrap();
        let rest = coordinate_of(&sim);
        let speed = sim.state().velocity(0, BodyId(0)).norm();
        println!(
            "hinge stop h = {h}: passed the bound by at most {deepest:.1e} rad, rests at {rest:.12} rad, speed {speed:.1e}, {:.2} it/step, {}/{} converged",
            s.mean_iterations, s.converged_steps, s.steps
        );
        assert!(deepest < 1e-9, "passed the bound by {deepest}");
        assert!((rest - 0.6).abs() < 1e-9 && speed < 1e-9);
        assert!(sim.joint_errors(0).position < 1e-9);
        assert_eq!(s.converged_steps, s.steps);
    }
}

/// A range the swing never comes near adds no rows: the trajectory is bit for bit the
/// one without limits (the pendulum swings from 0 through π/2 towards π; the range is
/// [−1, 3.5] rad, its bounds at least 0.36 rad from the swing).
#[test]
fn an_unreached_range_changes_nothing() {
    let run = |model: Model| {
        let mut sim = Simulator::new(model, 1, 0.01, BackendChoice::Cpu).unwrap();
        sim.run(300).unwrap();
        sim.state().com_pose(0, BodyId(0))
    };
    let free = run(axion::scenes::pendulum().unwrap());
    let limited = run(pendulum(-1.0, 3.5));
    assert_eq!(free, limited);
}

/// A 2 kg slider on a vertical prismatic joint falls from 0 onto its lower bound at
/// −0.5 m: it lands within one step of √(2·0.5/g) and rests exactly on the bound.
#[test]
fn slider_falls_onto_its_lower_bound() {
    for h in STEPS {
        let model = axion::scenes::slider_on_bound().unwrap();
        let mut sim = Simulator::new(model, 1, h, BackendChoice::Cpu).unwrap();
        let mut landed = None;
        let mut deepest = f64::NEG_INFINITY;
        sim.run_with((1.0 / h) as usize, |s| {
            let z = coordinate_of(s);
            deepest = deepest.max(-0.5 - z);
            if landed.is_none() && z < -0.5 + 1e-9 {
                landed = Some(s.time());
            }
        })
        .unwrap();
        let landed = landed.expect("landed");
        let exact = (2.0f64 * 0.5 / 9.81).sqrt();
        println!(
            "slider h = {h}: landed at {landed:.3} s (free fall {exact:.4} s), passed the bound by at most {deepest:.1e} m, rests at {:.12} m",
            coordinate_of(&sim)
        );
        assert!((landed - exact).abs() <= h + 1e-9);
        assert!(deepest < 1e-9 && (coordinate_of(&sim) + 0.5).abs() < 1e-9);
    }
}

/// A range that crosses ±π ([2.5, 3.5] rad) is measured around its middle: a hinge
/// about the vertical, started at 3.0 rad and spun by a velocity drive (2 rad/s), stops
/// at 3.5 rad and stays there against the drive.
#[test]
fn a_range_across_pi_holds() {
    for h in STEPS {
        let model = axion::scenes::turnstile_across_pi().unwrap();
        let mut sim = Simulator::new(model, 1, h, BackendChoice::Cpu).unwrap();
        assert!((coordinate_of(&sim) - 3.0).abs() < 1e-12);
        let mut highest = f64::NEG_INFINITY;
        let s = sim
            .run_with((1.0 / h) as usize, |s| {
                highest = highest.max(coordinate_of(s))
            })
            .unwrap();
        println!(
            "range across π h = {h}: highest {highest:.12} rad, rests at {:.12} rad, {}/{} converged",
            coordinate_of(&sim),
            s.converged_steps,
            s.steps
        );
        assert!(highest < 3.5 + 1e-9 && (coordinate_of(&sim) - 3.5).abs() < 1e-9);
        assert_eq!(s.converged_steps, s.steps);
    }
}

/// Ranges the solver does not enforce: a full turn or more on a hinge (every relative
/// orientation lies in it; URDF's ±2π arms, `continuous`), and no bound on a slider.
#[test]
fn full_turn_ranges_are_not_constraints() {
    let m = pendulum(-std::f64::consts::TAU, std::f64::consts::TAU);
    assert!(m.joints()[0].range().is_none());
    assert!(pendulum(-0.3, 0.6).joints()[0].range().is_some());
}

/// A scene file's `range = [lower, upper]`: the door of docs/scenes.md, pushed open by
/// its drive, stops at 90°.
#[test]
fn scene_file_ranges_are_enforced() {
    let docs = include_str!("../../../docs/scenes.md");
    let start = docs.find("# A door:").expect("the door example");
    let end = start + docs[start..].find("```").expect("end of block");
    let scene = axion::parse_scene(&docs[start..end]).unwrap();
    let range = scene.model.joints()[0].range().expect("a range");
    assert_eq!(range.lower, 0.0);
    assert!((range.upper - std::f64::consts::FRAC_PI_2).abs() < 1e-7);
    let mut sim = Simulator::new(scene.model, 1, 0.01, BackendChoice::Cpu).unwrap();
    sim.run(200).unwrap();
    assert!((coordinate_of(&sim) - range.upper).abs() < 1e-9);
}
