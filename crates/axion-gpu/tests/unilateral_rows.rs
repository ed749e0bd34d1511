//! The contact normal, friction and joint-limit rows of the step kernel
//! (`shaders/step_contacts.wgsl`, `shaders/step_limits.wgsl`) against `axion-constraints`
//! on random scenes, poses, velocities and multipliers — what `rows.rs` does for the
//! joint rows and drive coordinates.
//!
//! Each case builds a scene (a box over the ground, two spheres, a sphere against a
//! box, or two bodies on a hinge or slider with a range), with random friction (half
//! the cases anisotropic: an elliptic cone) and restitution (half the cases: the
//! normal row is velocity-level), and sixteen worlds with random poses near contact
//! and random velocities. [`GpuBackend::probe_detect`] runs the kernel's detection;
//! the test checks the tangent frame and cone scaling (`TangentFrame`, `FrictionCone`),
//! the effective inverse masses (`RowJacobian::effective_inverse_mass`), the lever arms,
//! the start gap (`ContactPoint::gap`), the approach velocity and the restitution bias
//! (`VelocityContact::bias`), and which joint bounds are within reach. Then at a random
//! iterate ($u^+$, $\lambda$; velocities from 1 mm/s to 1 m/s so that contacts both
//! stick and slip) [`GpuBackend::probe_unilateral`] evaluates the rows, compared with
//! `contact::normal_row` / `normal_row_velocity` (each row divided by $\partial\phi/\partial a$,
//! or its force step fixed at $-\phi/\partial_\lambda\phi$ where the contact separates),
//! `friction::symmetric::linearize` (the stick rows, or the slip's fixed force step and
//! the row across it; with `slip_coupling`, the coupling of the slip force to the
//! normal force) and, for the ranges, `normal_row` on the joint coordinate's gap.
//! The detection is the kernel's own (its narrow phase is tested in `narrow.rs`): the
//! reference takes the kernel's contact points, normal and tangents as its inputs.
//!
//! **Tolerances.** The kernel works in f32 ($\varepsilon = 2^{-23}$) on inputs rounded
//! from f64. Every compared value is a short chain of operations on quantities of a
//! known size $S$; each is allowed $K\varepsilon S$ with $K = 64$, as in `rows.rs`,
//! where $S$ is, for positions and gaps, $L = 1 +$ the largest coordinate (m) plus a
//! step's motion; for velocities $|v| + L|\omega|$; for a Fischer–Burmeister row on
//! $(a, \lambda)$ with $r$, $S_\phi = L_a + |a| + r|\lambda| + \varepsilon_{FB}$ (its
//! inputs' own rounding $L_a$), divided by $\partial_a\phi$ once more for each division
//! by it (the rows are divided by $\partial_a\phi$, which is itself $1 - a/n$ with the
//! same error); for friction, $Y = |\hat\lambda| + \hat\rho|\hat v|$ over $|y|$ where the
//! slip direction $y/|y|$ enters. Decisions on a threshold (stick or slip, a separated
//! contact's fixed step, a bound within reach, an open gap) are skipped where the f64
//! value lies within $K\varepsilon$ of the threshold in the same scale, since f32 may
//! fall on the other side there.

mod common;

use common::rotation;

use axion_constraints::RowJacobian;
use axion_constraints::contact::{
    BAUMGARTE, ContactPoint, DEFAULT_FB_EPS_SQ, NormalRow, OPEN_GAP, VelocityContact, normal_row,
    normal_row_velocity,
};
use axion_constraints::drive::{CoordinateKind, coordinate};
use axion_constraints::friction::projection::{self, SLIP_BAND, SlipState};
use axion_constraints::friction::symmetric::{self, KAPPA_MIN, SymmetricFriction};
use axion_constraints::friction::{FrictionCone, TangentFrame};
use axion_gpu::{ContactSlotProbe, Detection, GpuSettings, ProbeIterate, RowLinearization};
use axion_math::{Pose, Twist, angular, integrate, linear, twist};
use axion_model::{
    Anisotropy, BodyDesc, BodyId, Geometry, JointDesc, JointLimits, JointType, Material, Model,
    ModelBuilder, Shape, ShapeDesc, State,
};
use nalgebra::{Isometry3, UnitQuaternion, Vector2, Vector3};
use proptest::prelude::*;

const EPS: f64 = f32::EPSILON as f64;
const K: f64 = 64.0;
const WORLDS: usize = 16;
/// `GpuSettings::default().contact_margin`, the margin the detection uses.
const MARGIN: f64 = 0.02;
/// The kernel's `FB_FIX_BELOW`: below this $\partial_a\phi$ a row's step is fixed.
const FIX_BELOW: f64 = 1e-3;

fn close(gpu: f32, cpu: f64, tolerance: f64) -> bool {
    (f64::from(gpu) - cpu).abs() <= tolerance
}

fn v64(v: &Vector3<f32>) -> Vector3<f64> {
    v.cast()
}

fn vector(range: f64) -> impl Strategy<Value = Vector3<f64>> {
    prop::array::uniform3(-range..range).prop_map(Vector3::from)
}

/// One world's draw: poses (a position, an orientation and a contact offset δ for
/// each body), the start velocities, the iterate's velocities and its velocity
/// scale, and the multipliers' seeds.
#[derive(Clone, Debug)]
struct WorldDraw {
    at: [Vector3<f64>; 2],
    turn: [UnitQuaternion<f64>; 2],
    /// Where the contact sits, or how far past a bound the joint is (m or rad).
    offset: f64,
    /// A unit direction (the sphere–sphere line, a face of the box).
    direction: Vector3<f64>,
    start: [(Vector3<f64>, Vector3<f64>); 2],
    iterate: [(Vector3<f64>, Vector3<f64>); 2],
    /// 1e-3, 0.1 or 1: the iterate's velocities are this times `iterate`.
    speed: f64,
    /// λ_n seeds (N) and friction seeds (relative to μ λ_n) per row.
    normal: Vec<f64>,
    tangential: Vec<[f64; 2]>,
}

fn world_draw() -> impl Strategy<Value = WorldDraw> {
    (
        (vector(2.0), vector(2.0), rotation(), rotation()),
        (-4e-3f64..6e-3, vector(1.0)),
        (vector(1.0), vector(2.0), vector(1.0), vector(2.0)),
        (vector(1.0), vector(2.0), vector(1.0), vector(2.0)),
        prop::sample::select(vec![1e-3, 0.1, 1.0]),
        prop::collection::vec(-2.0f64..30.0, 8),
        prop::collection::vec(prop::array::uniform2(-1.5f64..1.5), 8),
    )
        .prop_filter("a direction", |d| d.1.1.norm() > 0.1)
        .prop_map(|(p, o, s, i, speed, normal, tangential)| WorldDraw {
            at: [p.0, p.1],
            turn: [p.2, p.3],
            offset: o.0,
            direction: o.1.normalize(),
            start: [(s.0, s.1), (s.2, s.3)],
            iterate: [(i.0, i.1), (i.2, i.3)],
            speed,
            normal,
            tangential,
        })
}

/// A case's scene: `kind` 0 a box over the ground, 1 two spheres, 2 a sphere against
/// a box, 3 two bodies on a hinge with a range, 4 on a slider with a range.
#[derive(Clone, Debug)]
struct SceneDraw {
    kind: usize,
    friction: (f64, f64),
    /// Anisotropy of the first shape: axis (body frame) and the friction across it.
    anisotropy: Option<(Vector3<f64>, f64)>,
    restitution: f64,
    sizes: Vector3<f64>,
    h: f64,
    /// The range's bounds: lower, and its width (rad or m).
    range: (f64, f64),
    slip_coupling: bool,
    /// `GpuSettings::friction_creep`.
    creep: f64,
}

fn scene_draw() -> impl Strategy<Value = SceneDraw> {
    (
        0usize..5,
        (0.05f64..1.5, 0.05f64..1.5),
        prop::option::of((
            vector(1.0).prop_filter("an axis", |a| a.norm() > 0.1),
            0.01f64..2.0,
        )),
        prop::sample::select(vec![0.0, 0.0, 0.3, 0.8]),
        prop::array::uniform3(0.1f64..0.5).prop_map(Vector3::from),
        prop::sample::select(vec![0.002, 0.01, 0.05]),
        (-3.0f64..2.0, 0.2f64..3.0),
        any::<bool>(),
        prop::sample::select(vec![0.0, 1e-6, 1e-3, 1e-2]),
    )
        .prop_map(
            |(kind, friction, anisotropy, restitution, sizes, h, range, slip_coupling, creep)| {
                SceneDraw {
                    kind,
                    friction,
                    anisotropy,
                    restitution,
                    sizes,
                    h,
                    range,
                    slip_coupling,
                    creep,
                }
            },
        )
}

fn material(s: &SceneDraw, first: bool) -> Material {
    Material {
        friction: if first { s.friction.0 } else { s.friction.1 },
        restitution: if first { s.restitution } else { 0.0 },
        anisotropy: s
            .anisotropy
            .filter(|_| first)
            .map(|(axis, friction_perp)| Anisotropy {
                axis,
                friction_perp,
            }),
    }
}

fn dynamic(name: &str, shape: Shape, mass: f64, m: Material) -> BodyDesc {
    BodyDesc::dynamic(name)
        .mass(mass, Vector3::zeros(), shape.unit_inertia(mass))
        .shape(ShapeDesc::new(shape).material(m))
}

/// The scene's model (bodies 0 and 1 are the two bodies the worlds place).
fn model(s: &SceneDraw) -> Model {
    let mut b = ModelBuilder::new();
    let e = s.sizes;
    let boxed = Shape::Box { half_extents: e };
    let sphere = |r: f64| Shape::Sphere { radius: r };
    match s.kind {
        0 => {
            b.add_body(
                BodyDesc::fixed("ground").shape(
                    ShapeDesc::from_geometry(Geometry::HalfSpace {
                        normal: Vector3::z(),
                    })
                    .material(material(s, false)),
                ),
            )
            .unwrap();
            b.add_body(dynamic("box", boxed, 2.0, material(s, true)))
                .unwrap();
        }
        1 => {
            b.add_body(dynamic("a", sphere(e.x), 1.5, material(s, true)))
                .unwrap();
            b.add_body(dynamic("b", sphere(e.y), 0.7, material(s, false)))
                .unwrap();
        }
        2 => {
            b.add_body(dynamic("ball", sphere(e.x), 0.8, material(s, true)))
                .unwrap();
            b.add_body(dynamic("box", boxed, 3.0, material(s, false)))
                .unwrap();
        }
        _ => {
            let (parent, child) = common::parent_and_child(&mut b);
            let axis = e.normalize();
            let ty = if s.kind == 3 {
                JointType::Revolute { axis }
            } else {
                JointType::Prismatic { axis }
            };
            let frames = (
                Isometry3::translation(0.2, -0.1, 0.3),
                Isometry3::translation(-0.3, 0.1, 0.0),
            );
            b.add_joint(
                JointDesc::new("joint", ty, Some(parent), child)
                    .frames(frames.0, frames.1)
                    .limits(JointLimits {
                        lower: s.range.0,
                        upper: s.range.0 + s.range.1,
                        effort: 0.0,
                        velocity: 0.0,
                    }),
            )
            .unwrap();
        }
    }
    b.build().unwrap()
}

/// Places world `w`'s two bodies (see [`model`]): in or near contact, or with the
/// joint near one of its bounds.
fn place(model: &Model, s: &SceneDraw, d: &WorldDraw, state: &mut State, w: usize) {
    let e = s.sizes;
    let pose = |at: Vector3<f64>, turn| Isometry3::from_parts(at.into(), turn);
    let mut poses = [pose(d.at[0], d.turn[0]), pose(d.at[1], d.turn[1])];
    match s.kind {
        0 => {
            // The box's lowest corner `offset` above the ground.
            let r = d.turn[1].to_rotation_matrix();
            let depth: f64 = (0..3).map(|j| r[(2, j)].abs() * e[j]).sum();
            poses[1].translation.vector.z = depth + d.offset;
        }
        1 => {
            let at = d.at[0] + d.direction * (e.x + e.y + d.offset);
            poses[1].translation.vector = at;
        }
        2 => {
            // The ball over a point of a face of the box.
            let axis = d.direction.iamax();
            let sign = d.direction[axis].signum();
            let mut local = d.direction.component_mul(&e) * 0.8;
            local[axis] = sign * e[axis];
            let mut normal = Vector3::zeros();
            normal[axis] = sign;
            let (face, n) = (poses[1] * nalgebra::Point3::from(local), d.turn[1] * normal);
            poses[0].translation.vector = face.coords + n * (e.x + d.offset);
        }
        _ => {
            // The child where the joint holds at a coordinate `offset` × 10 past a bound
            // (rad or m), then moved by a little.
            let mj = &model.joints()[0];
            let frames = &mj.joint.frames;
            let bound = if d.direction.x > 0.0 {
                s.range.0
            } else {
                s.range.0 + s.range.1
            };
            let q = bound + 10.0 * d.offset * d.direction.x.signum();
            let axis = nalgebra::Unit::new_normalize(e);
            let motion = if s.kind == 3 {
                Isometry3::from_parts(
                    nalgebra::Translation3::identity(),
                    UnitQuaternion::from_axis_angle(&axis, q),
                )
            } else {
                Isometry3::translation(axis.x * q, axis.y * q, axis.z * q)
            };
            let wobble = pose(d.direction * 1e-3, UnitQuaternion::new(d.direction * 1e-3));
            poses[1] = poses[0] * frames.parent * motion * frames.child.inverse() * wobble;
        }
    }
    for (b, p) in poses.iter().enumerate() {
        if !model.bodies()[b].is_dynamic() {
            continue;
        }
        state.set_body_pose(model, w, BodyId(b), *p);
        let (v, om) = d.start[b];
        state.set_velocity(w, BodyId(b), twist(v, om));
    }
}

/// The iterate's velocity of each body (the state's bodies 0 and 1).
fn iterate_velocities(d: &WorldDraw) -> Vec<Twist> {
    d.iterate
        .iter()
        .map(|(v, om)| twist(v * d.speed, om * d.speed))
        .collect()
}

/// What the comparison of one world skipped (near a threshold) and checked.
#[derive(Default, Debug)]
struct Counts {
    contacts: usize,
    stick: usize,
    slip: usize,
    bounce: usize,
    fixed_normal: usize,
    limits_active: usize,
    skipped: usize,
}

/// Checks one FB row of the kernel against the reference `nr` on $(a, \lambda)$ with
/// $r$: the row divided by $\partial_a\phi$, or its step fixed at $-\phi/\partial_\lambda\phi$.
/// `input` is the size of the quantities $a$ was computed from (its rounding is
/// $K\varepsilon$ times that). A position-level row (`velocity` false) is
/// $(\phi/h,\ \partial_\lambda\phi/h^2)$, a velocity-level one $(\phi,\ \partial_\lambda\phi/h)$.
/// The tolerances carry the inputs' rounding through the first derivatives of $\phi$,
/// $\partial_a\phi = 1 - a/n$ and $\partial_\lambda\phi = r(1 - r\lambda/n)$,
/// $n = \sqrt{a^2 + r^2\lambda^2 + \varepsilon_{FB}^2}$, plus each one's own rounding.
/// Returns false (nothing checked) where $\partial_a\phi$ is within its error of the
/// kernel's threshold.
#[allow(clippy::too_many_arguments)]
fn check_fb_row(
    what: &str,
    got: &RowLinearization,
    nr: &NormalRow,
    a: f64,
    r: f64,
    lambda: f64,
    input: f64,
    velocity: bool,
    h: f64,
) -> Result<bool, TestCaseError> {
    let fb = nr.fb;
    let n = (a * a + r * r * lambda * lambda + DEFAULT_FB_EPS_SQ).sqrt();
    let n3 = n * n * n;
    let (da, dl) = (K * EPS * input, K * EPS * lambda.abs());
    let rl = r * lambda;
    let phi_error = fb.d_a.abs() * da + fb.d_b.abs() * dl + K * EPS * fb.value.abs();
    let d_a_error = (n * n - a * a) / n3 * da + (a * r * rl).abs() / n3 * dl + K * EPS;
    let d_b_error = r * ((rl * a).abs() / n3 * da + r * (n * n - rl * rl) / n3 * dl + K * EPS);
    if (fb.d_a - FIX_BELOW).abs() <= d_a_error {
        return Ok(false);
    }
    prop_assert!(
        close(got.multiplier, lambda, dl),
        "{}: multiplier {} vs {}",
        what,
        got.multiplier,
        lambda
    );
    let (per, scale) = if velocity { (1.0, h) } else { (h, h * h) };
    if fb.d_a > FIX_BELOW {
        prop_assert!(
            got.fixed_step.is_none(),
            "{}: fixed, d_a = {}",
            what,
            fb.d_a
        );
        let residual = fb.value / (per * fb.d_a);
        let tolerance = (phi_error + (fb.value / fb.d_a).abs() * d_a_error) / (per * fb.d_a);
        prop_assert!(
            close(got.residual, residual, tolerance),
            "{}: residual {} vs {} (± {})",
            what,
            got.residual,
            residual,
            tolerance
        );
        let compliance = fb.d_b / (scale * fb.d_a);
        let tolerance = (d_b_error + (fb.d_b / fb.d_a).abs() * d_a_error) / (scale * fb.d_a);
        prop_assert!(
            close(got.compliance, compliance, tolerance),
            "{}: compliance {} vs {} (± {})",
            what,
            got.compliance,
            compliance,
            tolerance
        );
    } else {
        let step = -fb.value / fb.d_b;
        let tolerance = (phi_error + step.abs() * d_b_error) / fb.d_b;
        prop_assert!(
            matches!(got.fixed_step, Some(x) if close(x, step, tolerance)),
            "{}: fixed step {:?} vs {} (± {})",
            what,
            got.fixed_step,
            step,
            tolerance
        );
    }
    Ok(true)
}

fn check_jacobian(
    what: &str,
    got: &[f32; 12],
    expected: &RowJacobian,
    tolerance: f64,
) -> Result<(), TestCaseError> {
    let e: Vec<f64> = expected
        .body_a
        .iter()
        .chain(expected.body_b.iter())
        .copied()
        .collect();
    for (k, (g, e)) in got.iter().zip(&e).enumerate() {
        prop_assert!(
            close(*g, *e, tolerance),
            "{}: J[{}] {} vs {} (± {})",
            what,
            k,
            g,
            e,
            tolerance
        );
    }
    Ok(())
}

/// The contact slot `c` of one world and its three rows against the reference.
#[allow(clippy::too_many_arguments)]
fn check_contact(
    model: &Model,
    s: &SceneDraw,
    state: &State,
    w: usize,
    c: &ContactSlotProbe,
    iterate: &[Twist],
    lambda: [f64; 3],
    rows: &[RowLinearization],
    counts: &mut Counts,
) -> Result<(), TestCaseError> {
    let h = s.h;
    let [a, b] = c.bodies;
    let (body_a, body_b) = (&model.bodies()[a.0], &model.bodies()[b.0]);
    let (qa, qb) = (state.com_pose(w, a), state.com_pose(w, b));
    let u0 = |id: BodyId, body: &axion_model::Body| {
        if body.is_dynamic() {
            state.velocity(w, id)
        } else {
            Twist::zeros()
        }
    };
    let (ua0, ub0) = (u0(a, body_a), u0(b, body_b));
    let ui = |id: BodyId, body: &axion_model::Body| {
        if body.is_dynamic() {
            iterate[id.0]
        } else {
            Twist::zeros()
        }
    };
    let (ua, ub) = (ui(a, body_a), ui(b, body_b));
    let size = 1.0
        + [qa.translation.vector.amax(), qb.translation.vector.amax()]
            .iter()
            .fold(3.0f64, |x, y| x.max(*y));
    let speed = |u: &Twist| linear(u).norm() + size * angular(u).norm();
    let normal = v64(&c.normal).normalize();
    let point = ContactPoint::new(
        normal,
        v64(&c.local_a),
        v64(&c.local_b),
        f64::from(c.thickness_a),
        f64::from(c.thickness_b),
    )
    .unwrap();

    // Detection: lever arms, gap, cone and frame, inverse masses, approach and bias.
    let (ra, rb) = point.lever_arms(&qa, &qb);
    for (got, e) in [(c.lever_arms[0], ra), (c.lever_arms[1], rb)] {
        prop_assert!(
            (v64(&got) - e).amax() <= K * EPS * size,
            "lever arm {} vs {}",
            got,
            e
        );
    }
    let gap = point.gap(&qa, &qb);
    prop_assert!(
        close(c.gap, gap, K * EPS * size),
        "gap {} vs {}",
        c.gap,
        gap
    );
    let (mu, aniso) = body_a.shapes[0]
        .material
        .combined_friction(&body_b.shapes[0].material);
    let (cone, frame) = match aniso {
        Some((side, an)) => {
            let turn = if side == 0 { qa.rotation } else { qb.rotation };
            let frame = TangentFrame::new(&normal, Some(&(turn * an.axis)));
            if frame.aligned {
                (FrictionCone::elliptic(mu, an.friction_perp).unwrap(), frame)
            } else {
                (
                    FrictionCone::isotropic(mu).unwrap(),
                    TangentFrame::new(&normal, None),
                )
            }
        }
        None => (
            FrictionCone::isotropic(mu).unwrap(),
            TangentFrame::new(&normal, None),
        ),
    };
    for (got, e) in c.tangents.iter().zip([frame.t1, frame.t2]) {
        prop_assert!((v64(got) - e).amax() <= K * EPS, "tangent {} vs {}", got, e);
    }
    let sc = cone.scaling();
    prop_assert!(
        close(c.mu, sc.mu, K * EPS * sc.mu),
        "μ_g {} vs {}",
        c.mu,
        sc.mu
    );
    for i in 0..2 {
        prop_assert!(
            close(c.scaling[i], sc.s[i], K * EPS * sc.s[i]),
            "s {} vs {}",
            c.scaling,
            sc.s
        );
    }
    let jn = point.normal_jacobian(&qa, &qb);
    let jt = [frame.t1, frame.t2].map(|t| point.jacobian_along(&qa, &qb, &t));
    let mass_size = |body: &axion_model::Body, arm: f64| {
        body.mass.inv_mass()
            + arm
                * arm
                * body
                    .mass
                    .world_inv_inertia(&UnitQuaternion::identity())
                    .norm()
    };
    let w_size = mass_size(body_a, ra.norm()) + mass_size(body_b, rb.norm());
    for (k, j) in [jn, jt[0], jt[1]].iter().enumerate() {
        let w_cpu =
            j.effective_inverse_mass(&body_a.mass, &qa.rotation, &body_b.mass, &qb.rotation);
        prop_assert!(
            close(c.inverse_masses[k], w_cpu, K * EPS * w_size),
            "w[{}] {} vs {}",
            k,
            c.inverse_masses[k],
            w_cpu
        );
    }
    let vn = jn.dot(&ua0, &ub0);
    let v_size = speed(&ua0) + speed(&ub0);
    prop_assert!(
        close(c.approach, vn, K * EPS * v_size),
        "approach {} vs {}",
        c.approach,
        vn
    );
    // The bias from the kernel's own start gap and approach velocity (checked above):
    // the formula alone, to f32 rounding.
    let (gap_k, approach_k) = (f64::from(c.gap), f64::from(c.approach));
    if (gap_k - OPEN_GAP).abs() <= K * EPS * size {
        counts.skipped += 1;
        return Ok(());
    }
    let bias = VelocityContact::new(s.restitution, BAUMGARTE)
        .unwrap()
        .bias(gap_k, approach_k, h);
    prop_assert!(
        close(c.bias, bias, K * EPS * (gap_k.abs() / h + approach_k.abs())),
        "bias {} vs {}",
        c.bias,
        bias
    );
    prop_assert_eq!(c.bounce, s.restitution > 0.0);

    // The normal row at the iterate, with the kernel's normal, points, tangents and w.
    let w_k = c.inverse_masses.cast::<f64>();
    let lambda_n = lambda[0];
    let iterate_size = size + h * (speed(&ua) + speed(&ub));
    let (nr, a_value, r, input) = if c.bounce {
        let r = h * w_k.x;
        let nr = normal_row_velocity(
            &jn,
            &ua,
            &ub,
            c.bias.into(),
            lambda_n,
            w_k.x,
            h,
            DEFAULT_FB_EPS_SQ,
        );
        let input = speed(&ua) + speed(&ub) + f64::from(c.bias).abs();
        (nr, jn.dot(&ua, &ub) + f64::from(c.bias), r, input)
    } else {
        let (pa, pb) = (integrate(&qa, &ua, h), integrate(&qb, &ub, h));
        let gap = point.gap(&pa, &pb);
        let r = h * h * w_k.x;
        (
            normal_row(gap, &jn, lambda_n, w_k.x, h, DEFAULT_FB_EPS_SQ),
            gap,
            r,
            iterate_size,
        )
    };
    counts.bounce += usize::from(c.bounce);
    if !check_fb_row(
        "normal row",
        &rows[0],
        &nr,
        a_value,
        r,
        lambda_n,
        input,
        c.bounce,
        h,
    )? {
        counts.skipped += 1;
        return Ok(());
    }
    let normal_fixed = rows[0].fixed_step.is_some();
    counts.fixed_normal += usize::from(normal_fixed);
    check_jacobian("normal row", &rows[0].jacobian, &jn, K * EPS * size)?;

    // Friction: the symmetric linearisation at the kernel's tangents and masses.
    let lambda_t = Vector2::new(lambda[1], lambda[2]);
    let v_t = Vector2::new(jt[0].dot(&ua, &ub), jt[1].dot(&ua, &ub));
    let w_t = Vector2::new(w_k.y, w_k.z);
    let eval = projection::evaluate_with_creep(&cone, &lambda_t, lambda_n, &v_t, &w_t, h, s.creep);
    let lam = sc.force_to_scaled(&lambda_t);
    let v = sc.velocity_to_scaled(&v_t);
    let y = lam * (1.0 - s.creep) - v * eval.rho;
    let radius = sc.mu * lambda_n.max(0.0);
    let y_size = lam.norm() + eval.rho * v.norm() + radius;
    let s_max = sc.s.max();
    if (y.norm() - radius * (1.0 - SLIP_BAND)).abs() <= K * EPS * y_size
        || (matches!(eval.state, SlipState::Slip { kappa, .. } if kappa > 0.0 && (kappa / KAPPA_MIN).ln().abs() < 1.0))
    {
        counts.skipped += 1;
        return Ok(());
    }
    let scaled_j = |e: &Vector2<f64>| jt[0] * (e.x * sc.s.x) + jt[1] * (e.y * sc.s.y);
    let v_error = K * EPS * s_max * (speed(&ua) + speed(&ub));
    match symmetric::linearize(&cone, &lambda_t, lambda_n, &v_t, &w_t, &jt, h, s.creep) {
        SymmetricFriction::Stick(stick) => {
            counts.stick += 1;
            for (i, e) in stick.iter().enumerate() {
                let got = &rows[1 + i];
                let what = format!("stick row {i}");
                prop_assert!(got.fixed_step.is_none(), "{}: fixed", what);
                prop_assert!(
                    close(
                        got.residual,
                        e.row.residual,
                        v_error + K * EPS * e.row.residual.abs()
                    ),
                    "{}: residual {} vs {}",
                    what,
                    got.residual,
                    e.row.residual
                );
                prop_assert!(
                    close(got.compliance, e.row.compliance, K * EPS * e.row.compliance),
                    "{}: compliance {} vs {}",
                    what,
                    got.compliance,
                    e.row.compliance
                );
                prop_assert!(
                    close(got.multiplier, e.multiplier, K * EPS * lam.norm()),
                    "{}: multiplier {} vs {}",
                    what,
                    got.multiplier,
                    e.multiplier
                );
                check_jacobian(
                    &what,
                    &got.jacobian,
                    &e.row.jacobian,
                    K * EPS * size * s_max,
                )?;
            }
        }
        SymmetricFriction::Slip { fixed_step, across } => {
            counts.slip += 1;
            let SlipState::Slip { direction, kappa } = eval.state else {
                unreachable!("symmetric and projection decide alike")
            };
            let dir = if direction == Vector2::zeros() {
                Vector2::x()
            } else {
                direction
            };
            let e = Vector2::new(-dir.y, dir.x);
            // The direction y/|y| is off by about ε Y/|y|.
            let turn = 1.0 + y_size / y.norm().max(f64::MIN_POSITIVE);
            let step = sc.force_to_scaled(&fixed_step);
            let mut along = dir.dot(&step);
            let mut coupling_error = 0.0;
            let got = &rows[1];
            if s.slip_coupling && lambda_n > 0.0 {
                match rows[0].fixed_step {
                    Some(n_step) => {
                        along += sc.mu * f64::from(n_step);
                        coupling_error = K * EPS * sc.mu * f64::from(n_step).abs();
                    }
                    None => prop_assert!(
                        close(got.coupling, sc.mu, K * EPS * sc.mu),
                        "coupling {} vs {}",
                        got.coupling,
                        sc.mu
                    ),
                }
            } else {
                prop_assert_eq!(got.coupling, 0.0);
            }
            let tolerance = K * EPS * (radius + lam.norm()) * turn + coupling_error;
            prop_assert!(
                matches!(got.fixed_step, Some(x) if close(x, along, tolerance)),
                "slip: fixed step {:?} vs {} (± {})",
                got.fixed_step,
                along,
                tolerance
            );
            prop_assert!(
                close(got.multiplier, dir.dot(&lam), K * EPS * lam.norm() * turn),
                "slip: multiplier {} vs {}",
                got.multiplier,
                dir.dot(&lam)
            );
            check_jacobian(
                "slip row",
                &got.jacobian,
                &scaled_j(&dir),
                K * EPS * size * s_max * turn,
            )?;
            let got = &rows[2];
            prop_assert!(
                close(got.multiplier, e.dot(&lam), K * EPS * lam.norm() * turn),
                "across: multiplier {} vs {}",
                got.multiplier,
                e.dot(&lam)
            );
            check_jacobian(
                "across row",
                &got.jacobian,
                &scaled_j(&e),
                K * EPS * size * s_max * turn,
            )?;
            match across {
                None => {
                    let x = e.dot(&step);
                    prop_assert!(
                        matches!(got.fixed_step, Some(g) if close(g, x, K * EPS * lam.norm() * turn)),
                        "across: fixed step {:?} vs {}",
                        got.fixed_step,
                        x
                    );
                }
                Some(row) => {
                    prop_assert!(got.fixed_step.is_none(), "across: fixed");
                    let rk = eval.rho * kappa;
                    let tolerance = K * EPS * turn * (lam.norm() / rk + row.row.residual.abs());
                    prop_assert!(
                        close(got.residual, row.row.residual, tolerance),
                        "across: residual {} vs {} (± {})",
                        got.residual,
                        row.row.residual,
                        tolerance
                    );
                    let tolerance = K * EPS * turn / (rk * h);
                    prop_assert!(
                        close(got.compliance, row.row.compliance, tolerance),
                        "across: compliance {} vs {} (± {})",
                        got.compliance,
                        row.row.compliance,
                        tolerance
                    );
                }
            }
        }
    }
    counts.contacts += 1;
    Ok(())
}

/// The range's slots of one world (lower bound, then upper) and their rows.
#[allow(clippy::too_many_arguments)]
fn check_limits(
    model: &Model,
    s: &SceneDraw,
    state: &State,
    w: usize,
    detection: &Detection,
    iterate: &[Twist],
    lambda: &[f64],
    rows: &[RowLinearization],
    counts: &mut Counts,
) -> Result<(), TestCaseError> {
    let h = s.h;
    let mj = &model.joints()[0];
    let range = mj.range().expect("an enforced range");
    let (p0, c0) = (state.com_pose(w, BodyId(0)), state.com_pose(w, BodyId(1)));
    let (p1, c1) = (
        integrate(&p0, &iterate[0], h),
        integrate(&c0, &iterate[1], h),
    );
    let size = 1.0
        + [
            p0.translation.vector.amax(),
            c0.translation.vector.amax(),
            p1.translation.vector.amax(),
            c1.translation.vector.amax(),
        ]
        .iter()
        .fold(3.0f64, |x, y| x.max(*y));
    // As rows.rs: an angle's Jacobian is conditioned by 1/(w² + s²) of the relative
    // rotation, and relative rotations near w = 0 are left out (the short-way sign).
    let conditioning = |pp: &Pose, pc: &Pose| -> Option<f64> {
        let rel = (pp * mj.joint.frames.parent).rotation.inverse()
            * (pc * mj.joint.frames.child).rotation;
        match range.coordinate {
            CoordinateKind::Angle => {
                let s = rel.imag().dot(&range.axis.vector());
                (rel.w.abs() > 1e-3).then(|| 1.0 / (rel.w * rel.w + s * s))
            }
            CoordinateKind::Displacement => Some(1.0),
        }
    };
    let (Some(k0), Some(k1)) = (conditioning(&p0, &c0), conditioning(&p1, &c1)) else {
        counts.skipped += 1;
        return Ok(());
    };
    let c_start = coordinate(range.coordinate, &mj.joint.frames, &range.axis, &p0, &c0);
    let c_end = coordinate(range.coordinate, &mj.joint.frames, &range.axis, &p1, &c1);
    let speed = c_start
        .jacobian
        .dot(&state.velocity(w, BodyId(0)), &state.velocity(w, BodyId(1)))
        .abs();
    let u_size = [0, 1].map(|b| {
        let u = state.velocity(w, BodyId(b));
        linear(&u).norm() + size * angular(&u).norm()
    });
    let (parent, child) = (&model.bodies()[0], &model.bodies()[1]);
    prop_assert_eq!(detection.limits.len(), 2);
    for (k, side) in [1.0, -1.0].into_iter().enumerate() {
        let bound = if side > 0.0 { range.lower } else { range.upper };
        let gap_of = |value: f64| side * (range.relative(value) - (bound - range.reference()));
        let gap0 = gap_of(c_start.value);
        let reach = MARGIN + 2.0 * h * speed;
        let start_error = K * EPS * k0 * (size + h * (u_size[0] + u_size[1]));
        if (gap0 - reach).abs() <= start_error {
            counts.skipped += 1;
            continue;
        }
        let got = &detection.limits[k];
        let active = gap0 <= reach;
        prop_assert_eq!(
            got.active,
            active,
            "bound {}: gap {} within {}",
            k,
            gap0,
            reach
        );
        let force = c_start.jacobian * side;
        let row = &rows[k];
        if !active {
            prop_assert!(
                matches!(row.fixed_step, Some(x) if close(x, -lambda[k], K * EPS * lambda[k].abs())),
                "inactive bound {}: fixed step {:?}",
                k,
                row.fixed_step
            );
            prop_assert_eq!(row.multiplier, 0.0);
            check_jacobian("inactive bound", &row.jacobian, &RowJacobian::zeros(), 0.0)?;
            continue;
        }
        counts.limits_active += 1;
        let w_cpu =
            force.effective_inverse_mass(&parent.mass, &p0.rotation, &child.mass, &c0.rotation);
        let w_size = 2.0 * (1.0 + 4.0 * size * size) * k0 * k0;
        prop_assert!(
            close(got.inverse_mass, w_cpu, K * EPS * w_size),
            "bound {}: w {} vs {}",
            k,
            got.inverse_mass,
            w_cpu
        );
        check_jacobian("bound", &row.jacobian, &force, K * EPS * size * k0)?;
        // The kernel's w (the row's r = h² w) and the gap at the iterate.
        let w_k = f64::from(got.inverse_mass);
        let gap = gap_of(c_end.value);
        let nr = normal_row(gap, &force, lambda[k], w_k, h, DEFAULT_FB_EPS_SQ);
        if !check_fb_row(
            "bound row",
            row,
            &nr,
            gap,
            h * h * w_k,
            lambda[k],
            size * k1,
            false,
            h,
        )? {
            counts.skipped += 1;
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn unilateral_rows_match_axion_constraints(
        scene in scene_draw(),
        draws in prop::collection::vec(world_draw(), WORLDS),
    ) {
        if common::skipped() {
            return Ok(());
        }
        let model = model(&scene);
        let mut state = State::new(&model, WORLDS).unwrap();
        for (w, d) in draws.iter().enumerate() {
            place(&model, &scene, d, &mut state, w);
        }
        let settings = GpuSettings { slip_coupling: scene.slip_coupling, friction_creep: scene.creep, ..Default::default() };
        let mut gpu = common::backend(&model, WORLDS, settings).unwrap();
        let detection = gpu.probe_detect(&model, &state, scene.h).unwrap();
        let slots = detection[0].contacts.len();
        let limits = detection[0].limits.len();
        let iterates: Vec<ProbeIterate> = draws
            .iter()
            .zip(&detection)
            .map(|(d, det)| {
                let mut multipliers = Vec::new();
                for (k, c) in det.contacts.iter().enumerate() {
                    let mu = f64::from(c.mu.max(0.05));
                    let n = d.normal[k % 8];
                    let t = d.tangential[k % 8];
                    multipliers.extend([n, t[0] * mu * n.abs(), t[1] * mu * n.abs()]);
                }
                multipliers.extend((0..limits).map(|k| d.normal[k]));
                ProbeIterate { velocities: iterate_velocities(d), multipliers }
            })
            .collect();
        let rows = gpu.probe_unilateral(&iterates).unwrap();
        let mut counts = Counts::default();
        for w in 0..WORLDS {
            prop_assert_eq!(rows[w].len(), 3 * slots + limits);
            let it = &iterates[w];
            for (k, c) in detection[w].contacts.iter().enumerate() {
                let r = &rows[w][3 * k..3 * k + 3];
                let lambda = [it.multipliers[3 * k], it.multipliers[3 * k + 1], it.multipliers[3 * k + 2]];
                if !c.active {
                    // An empty slot: zero rows whose forces are set to zero.
                    for (i, row) in r.iter().enumerate() {
                        prop_assert!(matches!(row.fixed_step, Some(x) if close(x, -lambda[i], K * EPS * lambda[i].abs())), "empty slot: {:?}", row);
                        prop_assert_eq!(row.jacobian, [0.0; 12]);
                        prop_assert_eq!(row.multiplier, 0.0);
                    }
                    continue;
                }
                check_contact(&model, &scene, &state, w, c, &it.velocities, lambda, r, &mut counts)?;
            }
            if limits > 0 {
                check_limits(&model, &scene, &state, w, &detection[w], &it.velocities, &it.multipliers[3 * slots..], &rows[w][3 * slots..], &mut counts)?;
            }
        }
        println!("scene {} h={} restitution={} anisotropic={} coupling={} creep={}: {:?}", scene.kind, scene.h, scene.restitution, scene.anisotropy.is_some(), scene.slip_coupling, scene.creep, counts);
    }
}
