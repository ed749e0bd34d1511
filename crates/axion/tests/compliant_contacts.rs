//! The contact normal rows' two regularisations (`SolverSettings::contact_smoothing`
//! and `contact_compliance`, docs/constraints.md, "Contact normal"): where each leaves a
//! resting body, against the closed forms, and the load of redundant contacts with the
//! compliance alone.

use axion::prelude::*;
use axion::{Geometry, math::Twist};
use nalgebra::Vector3;

const H: f64 = 0.01;
const G: f64 = 9.81;

/// Flat ground and one body `shape` of `mass` kg with its centre `height` above it.
fn on_ground(shape: Shape, mass: f64, height: f64) -> axion::Model {
    let mut b = ModelBuilder::new();
    b.add_body(
        BodyDesc::fixed("ground").shape(ShapeDesc::from_geometry(Geometry::HalfSpace {
            normal: Vector3::z(),
        })),
    )
    .unwrap();
    b.add_body(
        BodyDesc::dynamic("body")
            .at(Vector3::new(0.0, 0.0, height))
            .mass(mass, Vector3::zeros(), shape.unit_inertia(mass))
            .shape(ShapeDesc::new(shape)),
    )
    .unwrap();
    b.build().unwrap()
}

/// Runs `steps` steps; every one must converge. Returns the simulator.
fn rest(model: axion::Model, settings: SolverSettings, steps: usize) -> Simulator {
    let mut sim = Simulator::new(model, 1, H, BackendChoice::CpuWith(settings)).unwrap();
    for _ in 0..steps {
        let report = sim.step().unwrap();
        assert!(report.worlds[0].converged, "{:?}", report.worlds[0]);
    }
    sim
}

/// A ball resting on its one contact: its normal passes through the centre, so
/// $w_n = 1/m$ and the contact carries $\lambda_n = mg$. Smoothed, the ball floats at
/// the root of $\phi$, $g = \varepsilon^2/(2h^2w_n\lambda_n) = \varepsilon^2/(2h^2g)$
/// (5.1e-10 m); with the compliance alone it sinks by $\kappa h^2 w_n\lambda_n = \kappa
/// h^2 g$ (9.8e-8 m at $\kappa = 10^{-4}$). Both within 2e-10 m, the gap the contact
/// tolerance (1e-8 m/s over one step) resolves twice over.
#[test]
fn a_resting_ball_floats_by_the_smoothing_and_sinks_by_the_compliance() {
    let (radius, mass) = (0.1, 2.0);
    let ball = || on_ground(Shape::Sphere { radius }, mass, radius);
    let height = |sim: &Simulator| {
        let body = sim.model().body_id("body").unwrap();
        sim.state().com_pose(0, body).translation.vector.z
    };

    let smoothed = rest(ball(), SolverSettings::default(), 50);
    let eps_sq = SolverSettings::default().contact_smoothing;
    let float = eps_sq / (2.0 * H * H * G);
    assert!((height(&smoothed) - (radius + float)).abs() < 2e-10);

    let kappa = 1e-4;
    let compliant = SolverSettings {
        contact_smoothing: 0.0,
        contact_compliance: kappa,
        ..SolverSettings::default()
    };
    let sim = rest(ball(), compliant, 50);
    let sink = kappa * H * H * G;
    assert!(
        (height(&sim) - (radius - sink)).abs() < 2e-10,
        "{} against {}",
        height(&sim) - radius,
        -sink
    );
    let contacts = sim.contacts(0).unwrap();
    assert_eq!(contacts.len(), 1);
    assert!((contacts[0].normal_force - mass * G).abs() < 1e-9 * mass * G);
}

/// A box lying flat rests on its four bottom corners, one contact more than its
/// height and two tilts need: with the compliance alone (no smoothing,
/// `SolverSettings::compliant_contacts`) the corners act as equal springs and share
/// the weight equally, each $mg/4$, and the box stays still.
#[test]
fn redundant_corners_share_the_load_under_the_compliance_alone() {
    let (half, mass) = (Vector3::new(0.5, 0.25, 0.1), 3.0);
    let model = on_ground(Shape::Box { half_extents: half }, mass, half.z);
    let sim = rest(model, SolverSettings::default().compliant_contacts(), 50);
    let contacts = sim.contacts(0).unwrap();
    let pressed: Vec<f64> = contacts
        .iter()
        .map(|c| c.normal_force)
        .filter(|&f| f > 0.0)
        .collect();
    assert_eq!(pressed.len(), 4, "{contacts:?}");
    for f in &pressed {
        assert!((f - mass * G / 4.0).abs() < 1e-6 * mass * G, "{pressed:?}");
    }
    let body = sim.model().body_id("body").unwrap();
    let v: Twist = sim.state().velocity(0, body);
    assert!(v.norm() < 1e-9, "{v:?}");
}
