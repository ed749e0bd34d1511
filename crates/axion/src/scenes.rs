//! Built-in scenes: the nine canonical scenes (docs/canonical-scenes.md defines them and
//! their pass criteria), the reference implementation's example scenes, and smaller
//! test scenes. Tests, examples and benchmarks build them from here so they all simulate
//! the same thing.

use std::f64::consts::FRAC_PI_4;

use std::collections::HashMap;

use axion_import::{RobotError, RobotOptions, import_urdf};
use axion_model::{
    Anisotropy, BodyDesc, BodyId, DriveDesc, Geometry, JointDesc, JointLimits, JointType, Material,
    Model, ModelBuilder, ModelError, Shape, ShapeDesc,
};
use nalgebra::{Isometry3, Matrix3, UnitQuaternion, Vector3};

/// A point-like mass: a tiny inertia keeps the mass matrix invertible without
/// changing the dynamics measurably (1e-6 kg·m² against m L² = 1 kg·m²).
const POINT_INERTIA: f64 = 1e-6;

/// Canonical scene 2 (docs/canonical-scenes.md): a 1 kg point mass on a massless 1 m
/// link, hinged to the world at the origin about y, released horizontal (at $x = 1$ m).
pub fn pendulum() -> Result<Model, ModelError> {
    pendulum_with(|hinge| hinge)
}

/// [`pendulum`] with its hinge changed by `hinge` (a range, damping, a drive, …);
/// falling is the positive angle.
pub fn pendulum_with(hinge: impl FnOnce(JointDesc) -> JointDesc) -> Result<Model, ModelError> {
    let mut b = ModelBuilder::new();
    let bob = b.add_body(
        BodyDesc::dynamic("bob")
            .at(Vector3::new(1.0, 0.0, 0.0))
            .mass(1.0, Vector3::zeros(), Matrix3::identity() * POINT_INERTIA),
    )?;
    b.add_joint(hinge(
        JointDesc::new(
            "hinge",
            JointType::Revolute { axis: Vector3::y() },
            None,
            bob,
        )
        .frames(
            Isometry3::identity(),
            Isometry3::translation(-1.0, 0.0, 0.0),
        ),
    ))?;
    b.build()
}

/// A joint range from `lower` to `upper` (rad or m) without effort or speed limits.
pub fn range(lower: f64, upper: f64) -> JointLimits {
    JointLimits {
        lower,
        upper,
        effort: 0.0,
        velocity: 0.0,
    }
}

/// A 2 kg block on a vertical prismatic joint to the world (axis z), starting at 0 with
/// its range's lower bound at −0.5 m and no upper bound: it falls onto the bound.
pub fn slider_on_bound() -> Result<Model, ModelError> {
    let mut b = ModelBuilder::new();
    let block = b.add_body(BodyDesc::dynamic("block").mass(
        2.0,
        Vector3::zeros(),
        Matrix3::identity() * 0.01,
    ))?;
    b.add_joint(
        JointDesc::new(
            "slide",
            JointType::Prismatic { axis: Vector3::z() },
            None,
            block,
        )
        .limits(range(-0.5, f64::INFINITY)),
    )?;
    b.build()
}

/// A 1 kg arm (0.5 m from its hinge) turning about the vertical, with a range that
/// crosses ±π, [2.5, 3.5] rad: started at 3.0 rad and spun by a velocity drive
/// (2 rad/s, k_e = 50), it stops at 3.5 rad and stays there against the drive.
pub fn turnstile_across_pi() -> Result<Model, ModelError> {
    let mut b = ModelBuilder::new();
    let start = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), 3.0);
    let arm = b.add_body(
        BodyDesc::dynamic("arm")
            .pose(Isometry3::from_parts(
                (start * Vector3::new(0.5, 0.0, 0.0)).into(),
                start,
            ))
            .mass(1.0, Vector3::zeros(), Matrix3::identity() * 0.02),
    )?;
    b.add_joint(
        JointDesc::new(
            "turn",
            JointType::Revolute { axis: Vector3::z() },
            None,
            arm,
        )
        .frames(
            Isometry3::identity(),
            Isometry3::translation(-0.5, 0.0, 0.0),
        )
        .limits(range(2.5, 3.5))
        .drive(DriveDesc::Velocity {
            target: 2.0,
            ke: 50.0,
        }),
    )?;
    b.build()
}

/// The exact period of a pendulum of length `l` released at rest from angle `theta0`
/// (rad from the bottom): $T = 4\sqrt{l/g}\thinspace K(\sin\tfrac{\theta_0}{2})$, with the complete
/// elliptic integral $K(k) = \pi / (2\thinspace \mathrm{AGM}(1, \sqrt{1-k^2}))$.
pub fn pendulum_period(l: f64, g: f64, theta0: f64) -> f64 {
    let k = (theta0 / 2.0).sin();
    let (mut a, mut b) = (1.0f64, (1.0 - k * k).sqrt());
    while (a - b).abs() > 1e-15 * a {
        (a, b) = (0.5 * (a + b), (a * b).sqrt());
    }
    4.0 * (l / g).sqrt() * std::f64::consts::PI / (2.0 * a)
}

/// Options of [`chain`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChainOptions {
    /// Number of links.
    pub links: usize,
    /// Length of each link (m).
    pub link_length: f64,
    /// Mass of each link (kg).
    pub link_mass: f64,
    /// Initial angle from the vertical (rad), about the world x axis.
    pub angle: f64,
    /// Mass of a sphere hung from the last link by one more hinge, if any (kg).
    pub bob_mass: Option<f64>,
    /// `Some(Υ)`: every hinge velocity-level with Baumgarte factor Υ
    /// ([`JointDesc::velocity_level`]) instead of position-level (the default).
    pub baumgarte: Option<f64>,
}

impl Default for ChainOptions {
    /// Canonical scene 3: 20 capsules of 0.1 m and 0.1 kg released 45° off vertical.
    fn default() -> Self {
        Self {
            links: 20,
            link_length: 0.1,
            link_mass: 0.1,
            angle: FRAC_PI_4,
            bob_mass: None,
            baumgarte: None,
        }
    }
}

/// Canonical scene 3 (docs/canonical-scenes.md): a chain of capsule links hung from the
/// world at the origin by revolute joints with axes alternating between the links' x and
/// y axes, straight and tilted by `angle` about x. The links do not collide (a joint
/// test). Link $i$'s centre is at distance $(i + \tfrac12)\ell$ from the anchor along the
/// chain.
pub fn chain(options: ChainOptions) -> Result<Model, ModelError> {
    let ChainOptions {
        links,
        link_length: l,
        link_mass: m,
        angle,
        bob_mass,
        baumgarte,
    } = options;
    let mut b = ModelBuilder::new();
    // Links hang along −z rotated by `angle` about x.
    let rotation = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), angle);
    let down = rotation * -Vector3::z();
    let radius = 0.1 * l;
    let capsule = Shape::Capsule {
        radius,
        half_length: 0.5 * l,
    };
    let top = Isometry3::translation(0.0, 0.0, 0.5 * l);
    let bottom = Isometry3::translation(0.0, 0.0, -0.5 * l);
    // The i-th hinge turns about the x axis when i is even, y when odd; it hangs from
    // the previous body's bottom end, or from the world at the origin.
    let hinge = |name: String, i: usize, parent: Option<BodyId>, child: BodyId| {
        let axis = if i.is_multiple_of(2) {
            Vector3::x()
        } else {
            Vector3::y()
        };
        let joint = JointDesc::new(name, JointType::Revolute { axis }, parent, child);
        match baumgarte {
            Some(b) => joint.velocity_level(b),
            None => joint,
        }
    };
    let parent_frame = |parent: Option<BodyId>| match parent {
        None => Isometry3::from_parts(Vector3::zeros().into(), rotation),
        Some(_) => bottom,
    };
    let mut parent: Option<BodyId> = None;
    for i in 0..links {
        let centre = down * ((i as f64 + 0.5) * l);
        let link = b.add_body(
            BodyDesc::dynamic(format!("link{i}"))
                .pose(Isometry3::from_parts(centre.into(), rotation))
                .mass(m, Vector3::zeros(), capsule.unit_inertia(m))
                // A joint test: the links do not collide with each other.
                .shape(ShapeDesc::new(capsule).collision(None)),
        )?;
        b.add_joint(hinge(format!("joint{i}"), i, parent, link).frames(parent_frame(parent), top))?;
        parent = Some(link);
    }
    if let Some(mass) = bob_mass {
        let r = 2.0 * radius;
        let centre = down * (links as f64 * l + r);
        let bob = b.add_body(
            BodyDesc::dynamic("bob")
                .pose(Isometry3::from_parts(centre.into(), rotation))
                .mass(
                    mass,
                    Vector3::zeros(),
                    Shape::Sphere { radius: r }.unit_inertia(mass),
                ),
        )?;
        b.add_joint(
            hinge("bob joint".into(), links, parent, bob)
                .frames(parent_frame(parent), Isometry3::translation(0.0, 0.0, r)),
        )?;
    }
    b.build()
}

/// A free body with principal inertias (1, 2, 3) kg·m² and no gravity, spinning mostly
/// about its stable third axis with a wobble: `ω₀ = (0.3, 0.2, 2)` rad/s.
pub fn torque_free_body() -> Result<Model, ModelError> {
    let mut b = ModelBuilder::new();
    b.gravity(Vector3::zeros())?;
    b.add_body(
        BodyDesc::dynamic("top")
            .pose(Isometry3::new(
                Vector3::zeros(),
                Vector3::new(0.2, -0.1, 0.4),
            ))
            .velocity(axion_math::twist(
                Vector3::new(0.1, 0.0, 0.0),
                Vector3::new(0.3, 0.2, 2.0),
            ))
            .mass(
                5.0,
                Vector3::zeros(),
                Matrix3::from_diagonal(&Vector3::new(1.0, 2.0, 3.0)),
            ),
    )?;
    b.build()
}

/// Which joint a [`servo`] drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServoJoint {
    /// A 10 kg bar 1 m × 0.2 × 0.2 m hinged at one end about z.
    Revolute,
    /// A 10 kg cube (1 m) sliding along x.
    Prismatic,
}

/// Canonical scene 6 (docs/canonical-scenes.md; no gravity): a servo with the given drive.
pub fn servo(joint: ServoJoint, drive: DriveDesc) -> Result<Model, ModelError> {
    let mut b = ModelBuilder::new();
    b.gravity(Vector3::zeros())?;
    let (size, kind, child_frame) = match joint {
        ServoJoint::Revolute => (
            Vector3::new(1.0, 0.2, 0.2),
            JointType::Revolute { axis: Vector3::z() },
            Isometry3::translation(-0.5, 0.0, 0.0),
        ),
        ServoJoint::Prismatic => (
            Vector3::new(1.0, 1.0, 1.0),
            JointType::Prismatic { axis: Vector3::x() },
            Isometry3::identity(),
        ),
    };
    let offset = -child_frame.translation.vector;
    let box_shape = Shape::Box {
        half_extents: size / 2.0,
    };
    let body = b.add_body(
        BodyDesc::dynamic("body")
            .at(offset)
            .mass(10.0, Vector3::zeros(), box_shape.unit_inertia(10.0))
            .shape(ShapeDesc::new(box_shape)),
    )?;
    b.add_joint(
        JointDesc::new("servo", kind, None, body)
            .frames(Isometry3::identity(), child_frame)
            .drive(drive),
    )?;
    b.build()
}

/// Canonical scene 7 (docs/canonical-scenes.md): a 240 kg cart (box 0.6 × 1.0 × 0.4 m,
/// density 1000) on a prismatic joint along world y with a velocity drive (`ke` = 1000,
/// target `cart_velocity`), and a 20 kg pole (0.1 × 0.1 × 2 m) hanging from the cart's
/// top on a free hinge about x.
pub fn cartpole(cart_velocity: f64) -> Result<Model, ModelError> {
    let mut b = ModelBuilder::new();
    let cart_shape = Shape::Box {
        half_extents: Vector3::new(0.3, 0.5, 0.2),
    };
    let pole_shape = Shape::Box {
        half_extents: Vector3::new(0.05, 0.05, 1.0),
    };
    let cart = b.add_body(BodyDesc::dynamic("cart").shape(ShapeDesc::new(cart_shape)))?;
    let pole = b.add_body(
        BodyDesc::dynamic("pole")
            .at(Vector3::new(0.0, 0.0, -0.8))
            .shape(ShapeDesc::new(pole_shape)),
    )?;
    b.add_joint(
        JointDesc::new(
            "slider",
            JointType::Prismatic { axis: Vector3::y() },
            None,
            cart,
        )
        .drive(DriveDesc::Velocity {
            target: cart_velocity,
            ke: 1000.0,
        }),
    )?;
    b.add_joint(
        JointDesc::new(
            "hinge",
            JointType::Revolute { axis: Vector3::x() },
            Some(cart),
            pole,
        )
        .frames(
            Isometry3::translation(0.0, 0.0, 0.2),
            Isometry3::translation(0.0, 0.0, 1.0),
        ),
    )?;
    b.build()
}

/// The reference implementation's double-pendulum demo: two 2 m bars (0.2 × 0.2 m
/// section, density 1000, 80 kg each) in a chain of two hinges about y, the first at
/// (0, 0, 5), released horizontal.
pub fn double_pendulum() -> Result<Model, ModelError> {
    let mut b = ModelBuilder::new();
    let bar = Shape::Box {
        half_extents: Vector3::new(1.0, 0.1, 0.1),
    };
    let link0 = b.add_body(
        BodyDesc::dynamic("link0")
            .at(Vector3::new(1.0, 0.0, 5.0))
            .shape(ShapeDesc::new(bar)),
    )?;
    let link1 = b.add_body(
        BodyDesc::dynamic("link1")
            .at(Vector3::new(3.0, 0.0, 5.0))
            .shape(ShapeDesc::new(bar)),
    )?;
    let hinge = JointType::Revolute { axis: Vector3::y() };
    b.add_joint(JointDesc::new("j0", hinge, None, link0).frames(
        Isometry3::translation(0.0, 0.0, 5.0),
        Isometry3::translation(-1.0, 0.0, 0.0),
    ))?;
    b.add_joint(JointDesc::new("j1", hinge, Some(link0), link1).frames(
        Isometry3::translation(1.0, 0.0, 0.0),
        Isometry3::translation(-1.0, 0.0, 0.0),
    ))?;
    b.build()
}

/// A deliberately impossible system: one body welded to the world at two places 0.1 m
/// apart. No configuration satisfies both joints.
pub fn impossible() -> Result<Model, ModelError> {
    let mut b = ModelBuilder::new();
    let body =
        b.add_body(BodyDesc::dynamic("body").shape(ShapeDesc::new(Shape::Sphere { radius: 0.1 })))?;
    b.add_joint(JointDesc::new("weld a", JointType::Fixed, None, body))?;
    b.add_joint(
        JointDesc::new("weld b", JointType::Fixed, None, body)
            .frames(Isometry3::translation(0.1, 0.0, 0.0), Isometry3::identity()),
    )?;
    b.build()
}

/// The default material with friction coefficient `mu`.
fn friction(mu: f64) -> Material {
    Material {
        friction: mu,
        ..Default::default()
    }
}

/// The ground: a static half-space $z \le 0$ with friction `mu`.
fn ground(b: &mut ModelBuilder, mu: f64) -> Result<BodyId, ModelError> {
    let shape = ShapeDesc::from_geometry(Geometry::HalfSpace {
        normal: Vector3::z(),
    })
    .material(friction(mu));
    b.add_body(BodyDesc::fixed("ground").shape(shape))
}

/// Canonical scene 1 (docs/canonical-scenes.md): a 1 kg sphere of radius 0.5 m, centre at
/// z = 2, dropped on the ground (μ = 0.5) with restitution `restitution` on both.
pub fn drop(restitution: f64) -> Result<Model, ModelError> {
    let mut b = ModelBuilder::new();
    let material = Material {
        friction: 0.5,
        restitution,
        anisotropy: None,
    };
    let ground_shape = ShapeDesc::from_geometry(Geometry::HalfSpace {
        normal: Vector3::z(),
    })
    .material(material);
    b.add_body(BodyDesc::fixed("ground").shape(ground_shape))?;
    let sphere = Shape::Sphere { radius: 0.5 };
    b.add_body(
        BodyDesc::dynamic("ball")
            .at(Vector3::new(0.0, 0.0, 2.0))
            .mass(1.0, Vector3::zeros(), sphere.unit_inertia(1.0))
            .shape(ShapeDesc::new(sphere).material(material)),
    )?;
    b.build()
}

/// A unit cube of 1 kg with friction `mu`, its centre at `centre`.
fn unit_cube(name: String, centre: Vector3<f64>, mu: f64) -> BodyDesc {
    let cube = Shape::Box {
        half_extents: Vector3::repeat(0.5),
    };
    BodyDesc::dynamic(name)
        .at(centre)
        .mass(1.0, Vector3::zeros(), cube.unit_inertia(1.0))
        .shape(ShapeDesc::new(cube).material(friction(mu)))
}

/// Canonical scene 5 (docs/canonical-scenes.md): a 1 m, 1 kg cube resting on the ground,
/// μ = `mu` on both; the slope of `angle` (rad) is made by tilting gravity, so the cube
/// slides along +x.
pub fn incline(angle: f64, mu: f64) -> Result<Model, ModelError> {
    let mut b = ModelBuilder::new();
    b.gravity(Vector3::new(angle.sin(), 0.0, -angle.cos()) * 9.81)?;
    ground(&mut b, mu)?;
    b.add_body(unit_cube("cube".into(), Vector3::new(0.0, 0.0, 0.5), mu))?;
    b.build()
}

/// Canonical scene 4 (docs/canonical-scenes.md): `n` unit cubes (1 m, 1 kg) stacked on
/// the ground, μ = 0.8.
pub fn stack(n: usize) -> Result<Model, ModelError> {
    let mut b = ModelBuilder::new();
    ground(&mut b, 0.8)?;
    for i in 0..n {
        b.add_body(unit_cube(
            format!("cube{i}"),
            Vector3::new(0.0, 0.0, 0.5 + i as f64),
            0.8,
        ))?;
    }
    b.build()
}

/// Canonical scene 8 (docs/canonical-scenes.md): a 1000 kg box (1 m) resting on a 1 kg
/// box (0.2 m) on the ground, μ = 0.8.
pub fn mass_ratio() -> Result<Model, ModelError> {
    let mut b = ModelBuilder::new();
    ground(&mut b, 0.8)?;
    let material = friction(0.8);
    for (name, size, mass, z) in [("small", 0.2, 1.0, 0.1), ("heavy", 1.0, 1000.0, 0.7)] {
        let cube = Shape::Box {
            half_extents: Vector3::repeat(size / 2.0),
        };
        b.add_body(
            BodyDesc::dynamic(name)
                .at(Vector3::new(0.0, 0.0, z))
                .mass(mass, Vector3::zeros(), cube.unit_inertia(mass))
                .shape(ShapeDesc::new(cube).material(material)),
        )?;
    }
    b.build()
}

/// A unit cube (1 kg, μ = `mu`) on the ground moving along +x at `speed` m/s.
pub fn thrown_box(speed: f64, mu: f64) -> Result<Model, ModelError> {
    let mut b = ModelBuilder::new();
    ground(&mut b, mu)?;
    b.add_body(
        unit_cube("cube".into(), Vector3::new(0.0, 0.0, 0.5), mu).velocity(axion_math::twist(
            Vector3::new(speed, 0.0, 0.0),
            Vector3::zeros(),
        )),
    )?;
    b.build()
}

/// A 3 kg cylinder (radius [`ROLLING_RADIUS`], 0.4 m long) lying on its side on the
/// ground (μ = 0.8 on both), its axis along y, rolling along +x at `speed` m/s without
/// slipping (turning at `speed / r` about +y).
pub fn rolling_cylinder(speed: f64) -> Result<Model, ModelError> {
    let mut b = ModelBuilder::new();
    ground(&mut b, 0.8)?;
    add_rolling_cylinder(&mut b, 0.0, 0.0, speed)?;
    b.build()
}

/// Adds the cylinder of [`rolling_cylinder`] (body "can", μ = 0.8) lying on its side on
/// a flat support whose top is at height `top` and which moves along +x at `carried`
/// m/s: it rolls without slipping at `speed` m/s relative to the support (its centre
/// above x = 0 at `carried + speed`, turning at `speed / r` about +y).
pub fn add_rolling_cylinder(
    b: &mut ModelBuilder,
    top: f64,
    carried: f64,
    speed: f64,
) -> Result<BodyId, ModelError> {
    let r = ROLLING_RADIUS;
    let shape = Shape::Cylinder {
        radius: r,
        half_length: 0.2,
    };
    let lying = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::FRAC_PI_2);
    b.add_body(
        BodyDesc::dynamic("can")
            .pose(Isometry3::from_parts(
                Vector3::new(0.0, 0.0, top + r).into(),
                lying,
            ))
            .mass(3.0, Vector3::zeros(), shape.unit_inertia(3.0))
            .velocity(axion_math::twist(
                Vector3::new(carried + speed, 0.0, 0.0),
                Vector3::new(0.0, speed / r, 0.0),
            ))
            .shape(ShapeDesc::new(shape).material(friction(0.8))),
    )
}

/// Radius (m) of [`rolling_cylinder`].
pub const ROLLING_RADIUS: f64 = 0.3;

/// The reference's anisotropy test: a 1 kg cube of 0.2 m with μ = 2.0 along its body y
/// axis and 0.02 across it, on frictionless ground (so the combined coefficients are
/// 1.0 along y and 0.01 along x).
pub fn anisotropic_box() -> Result<Model, ModelError> {
    let mut b = ModelBuilder::new();
    ground(&mut b, 0.0)?;
    let cube = Shape::Box {
        half_extents: Vector3::repeat(0.1),
    };
    let material = Material {
        friction: 2.0,
        restitution: 0.0,
        anisotropy: Some(Anisotropy {
            axis: Vector3::y(),
            friction_perp: 0.02,
        }),
    };
    b.add_body(
        BodyDesc::dynamic("cube")
            .at(Vector3::new(0.0, 0.0, 0.1))
            .mass(1.0, Vector3::zeros(), cube.unit_inertia(1.0))
            .shape(ShapeDesc::new(cube).material(material)),
    )?;
    b.build()
}

/// The reference implementation's ball-fall example: a sphere of radius 1 m and density
/// 10 (41.9 kg), centre at z = 2, μ = 0.4, onto the ground.
pub fn reference_ball_fall() -> Result<Model, ModelError> {
    let mut b = ModelBuilder::new();
    ground(&mut b, 0.4)?;
    let material = friction(0.4);
    b.add_body(
        BodyDesc::dynamic("ball")
            .at(Vector3::new(0.0, 0.0, 2.0))
            .shape(
                ShapeDesc::new(Shape::Sphere { radius: 1.0 })
                    .density(10.0)
                    .material(material),
            ),
    )?;
    b.build()
}

/// The reference's inverted pyramid: cubes of half-size 0.3, 0.6 and 1.2 m (density
/// 500: 108, 864 and 6912 kg) stacked smallest at the bottom, touching, μ = 0.1.
pub fn inverted_pyramid() -> Result<Model, ModelError> {
    let mut b = ModelBuilder::new();
    ground(&mut b, 0.1)?;
    let material = friction(0.1);
    for (i, (half, z)) in [(0.3, 0.3), (0.6, 1.2), (1.2, 3.0)].into_iter().enumerate() {
        b.add_body(
            BodyDesc::dynamic(format!("box{i}"))
                .at(Vector3::new(0.0, 0.0, z))
                .shape(
                    ShapeDesc::new(Shape::Box {
                        half_extents: Vector3::repeat(half),
                    })
                    .density(500.0)
                    .material(material),
                ),
        )?;
    }
    b.build()
}

/// Canonical scene 9 (docs/canonical-scenes.md): `copies` side-by-side 10-box pyramids
/// (rows of 4, 3, 2, 1 unit cubes of 1 kg, 5 cm apart within a row), μ = 0.8; copies 2 m
/// apart along y.
pub fn pyramid(copies: usize) -> Result<Model, ModelError> {
    let mut b = ModelBuilder::new();
    ground(&mut b, 0.8)?;
    let pitch = 1.05;
    for c in 0..copies {
        let y = 2.0 * c as f64;
        for row in 0..4 {
            for k in 0..4 - row {
                let x = (k as f64 + 0.5 * row as f64) * pitch;
                let centre = Vector3::new(x, y, 0.5 + row as f64);
                b.add_body(unit_cube(format!("c{c}r{row}k{k}"), centre, 0.8))?;
            }
        }
    }
    b.build()
}

/// `examples/robots/skid_steer.urdf`: a chassis on two side wheels and a rear wheel
/// (cylinders of radius 0.36 m).
pub const SKID_STEER_URDF: &str = include_str!("../../../examples/robots/skid_steer.urdf");

/// The skid-steer robot of `examples/robots` on the ground (μ 0.7 on both), wheels on
/// the ground (chassis at z = 0.361 m), each wheel joint with a velocity drive
/// (ke 150) at `speeds` rad/s (left, right, rear). Its chassis is the body named
/// `chassis`.
pub fn skid_steer(speeds: [f64; 3]) -> Result<Model, RobotError> {
    let mut b = ModelBuilder::new();
    let ground = ShapeDesc::from_geometry(Geometry::HalfSpace {
        normal: Vector3::z(),
    })
    .material(friction(0.7));
    b.add_body(BodyDesc::fixed("ground").shape(ground))?;
    let drives: HashMap<String, DriveDesc> = ["left_joint", "right_joint", "rear_joint"]
        .iter()
        .zip(speeds)
        .map(|(j, w)| {
            (
                j.to_string(),
                DriveDesc::Velocity {
                    target: w,
                    ke: 150.0,
                },
            )
        })
        .collect();
    let options = RobotOptions {
        base_pose: Isometry3::translation(0.0, 0.0, 0.361),
        drives,
        friction: 0.7,
        ..Default::default()
    };
    import_urdf(SKID_STEER_URDF, &options, &mut b)?;
    Ok(b.build()?)
}
