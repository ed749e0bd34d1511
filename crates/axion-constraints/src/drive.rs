//! Drives: implicit PD servos on the coordinate of a revolute or prismatic joint.
//!
//! A drive adds one row whose multiplier $\lambda$ is the drive's generalized force
//! (N·m or N). Being solved inside the Newton system together with everything else,
//! it is stable at any gain and time step, unlike an explicit PD force.
//!
//! **Position mode** (target $q^\ast$, feed-forward velocity $\dot q^\ast$) converges to the
//! implicit PD law on the end-of-step state,
//! $$\lambda = -k_e\thinspace (q^+ - q^\ast) - k_d\Big(\frac{q^+ - q^-}{h} - \dot q^\ast\Big),$$
//! written as a compliant row with $\alpha = \dfrac1{h^2 k_e + h k_d}$:
//! $$h_{drive} = \alpha h\Big[k_e\thinspace (q^+ - q^\ast) + k_d\Big(\frac{q^+ - q^-}{h} - \dot q^\ast\Big)\Big] +
//!   \alpha h \lambda, \qquad J = \frac{\partial q}{\partial \mathbf q}\thinspace G, \qquad C = \alpha.$$
//! (The reference damps the position error, $-(k_e + k_d/h)(q^+ - q^\ast)$; we damp the
//! joint's actual velocity, which is what a PD servo does. Both have the same $\alpha$.)
//!
//! **Velocity mode** (target $\dot q^\ast$) converges to $\lambda = -k_e(\dot q^+ - \dot q^\ast)$:
//! $$h_{drive} = \dot q^+ - \dot q^\ast + \alpha h \lambda,\qquad \alpha = \frac1{h k_e},\qquad
//!   \dot q^+ = J u^+,\qquad C = \alpha.$$
//!
//! For a revolute joint, position differences are wrapped to $[-\pi, \pi)$.

use axion_math::{Pose, Twist, UnitAxis, wrap_angle};
use nalgebra::Vector3;

use crate::error::{ConstraintError, non_negative};
use crate::joint::JointGeometry;
use crate::joint::lock::slide_lock_stiffness;
use crate::row::{Row, RowJacobian};
use crate::stiffness::Stiffness;

/// A joint coordinate $q$ (rad or m) and its velocity Jacobian ($\dot q = J u$).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointCoordinate {
    /// $q$.
    pub value: f64,
    /// $J = \partial q/\partial q \cdot G$, blocks (parent, child).
    pub jacobian: RowJacobian,
}

/// Angle of a revolute joint about `axis` $a$ (joint frame). With
/// $\theta_{rel} = (w, \mathbf v)$ and $s = \mathbf v\cdot a$:
/// $$q = 2\thinspace \operatorname{atan2}(s, w),\qquad
///   J_c = \Big(0,\ R_{wp}\thinspace \frac{w^2 a + w\thinspace (\mathbf v\times a) + s\thinspace \mathbf v}{w^2 + s^2}\Big),\quad J_p = -J_c.$$
/// When the joint's other rows hold ($\mathbf v \parallel a$) the angular block is
/// $R_{wp}\thinspace a$, the hinge axis in the world.
pub fn revolute_coordinate(g: &JointGeometry, axis: &UnitAxis) -> JointCoordinate {
    let a = axis.vector();
    let rel = g.relative_rotation();
    let (w, v) = (rel.w, rel.imag());
    let s = v.dot(&a);
    let den = w * w + s * s;
    let local = if den > f64::MIN_POSITIVE {
        (a * (w * w) + v.cross(&a) * w + v * s) / den
    } else {
        a
    };
    let axis_world = g.frame_parent.rotation * local;
    JointCoordinate {
        value: 2.0 * s.atan2(w),
        jacobian: RowJacobian::new(Vector3::zeros(), -axis_world, Vector3::zeros(), axis_world),
    }
}

/// Displacement of a prismatic joint along `axis` $a$ (joint frame),
/// $a_w = R_{wp}\thinspace a$, $\delta = p_c - p_p$:
/// $$q = \delta\cdot a_w,\qquad J_c = (a_w,\ r_c\times a_w),\quad
///   J_p = \big(-a_w,\ -(p_c - x_P)\times a_w\big).$$
pub fn prismatic_coordinate(g: &JointGeometry, axis: &UnitAxis) -> JointCoordinate {
    let a = g.frame_parent.rotation * axis.vector();
    let d = g.separation();
    JointCoordinate {
        value: d.dot(&a),
        jacobian: RowJacobian::new(-a, -(g.r_parent + d).cross(&a), a, g.r_child.cross(&a)),
    }
}

/// Which coordinate a drive acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoordinateKind {
    /// An angle in rad; differences are wrapped to $[-\pi, \pi)$.
    Angle,
    /// A displacement in m.
    Displacement,
}

impl CoordinateKind {
    fn difference(self, a: f64, b: f64) -> f64 {
        match self {
            CoordinateKind::Angle => wrap_angle(a - b),
            CoordinateKind::Displacement => a - b,
        }
    }
}

/// What a drive tracks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DriveMode {
    /// Track position $q^\ast$ with feed-forward velocity $\dot q^\ast$ (usually 0).
    Position {
        /// $q^\ast$ (rad or m).
        target: f64,
        /// $\dot q^\ast$ (rad/s or m/s).
        target_velocity: f64,
    },
    /// Track velocity $\dot q^\ast$.
    Velocity {
        /// $\dot q^\ast$ (rad/s or m/s).
        target_velocity: f64,
    },
}

/// A validated drive: mode, stiffness $k_e$ and damping $k_d$, and the largest force
/// $F$ it exerts (an actuator's effort limit; unlimited by default).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Drive {
    mode: DriveMode,
    ke: f64,
    kd: f64,
    max_force: f64,
}

impl Drive {
    /// A position drive. Gains must be finite and `≥ 0`, not both zero.
    pub fn position(
        target: f64,
        target_velocity: f64,
        ke: f64,
        kd: f64,
    ) -> Result<Self, ConstraintError> {
        axion_math::error::ensure_finite("drive target", target)?;
        axion_math::error::ensure_finite("drive target velocity", target_velocity)?;
        non_negative("drive stiffness ke", ke)?;
        non_negative("drive damping kd", kd)?;
        if ke == 0.0 && kd == 0.0 {
            return Err(ConstraintError::ZeroDriveGains {
                reason: "a position drive needs ke > 0 or kd > 0",
            });
        }
        Ok(Self {
            mode: DriveMode::Position {
                target,
                target_velocity,
            },
            ke,
            kd,
            max_force: f64::INFINITY,
        })
    }

    /// A velocity drive with velocity gain `ke > 0` (N·m·s/rad or N·s/m).
    pub fn velocity(target_velocity: f64, ke: f64) -> Result<Self, ConstraintError> {
        axion_math::error::ensure_finite("drive target velocity", target_velocity)?;
        non_negative("drive gain ke", ke)?;
        if ke == 0.0 {
            return Err(ConstraintError::ZeroDriveGains {
                reason: "a velocity drive needs ke > 0",
            });
        }
        Ok(Self {
            mode: DriveMode::Velocity { target_velocity },
            ke,
            kd: 0.0,
            max_force: f64::INFINITY,
        })
    }

    /// The mode and its targets.
    pub fn mode(&self) -> DriveMode {
        self.mode
    }
    /// Stiffness (position mode) or velocity gain (velocity mode) $k_e$.
    pub fn ke(&self) -> f64 {
        self.ke
    }
    /// Damping $k_d$ (position mode only).
    pub fn kd(&self) -> f64 {
        self.kd
    }

    /// This drive limited to forces $|\lambda| \le F$ (N or N·m; `f64::INFINITY`: no
    /// limit). Errors: $F$ not positive, or NaN.
    pub fn with_max_force(self, max_force: f64) -> Result<Self, ConstraintError> {
        if max_force.is_nan() || max_force <= 0.0 {
            return Err(ConstraintError::NotPositive {
                what: "drive max force",
                value: max_force,
            });
        }
        Ok(Self { max_force, ..self })
    }
    /// The largest force $F$ the drive exerts (N or N·m; infinite: no limit).
    pub fn max_force(&self) -> f64 {
        self.max_force
    }

    /// Whether the drive's law asks for more than its largest force at this iterate:
    /// its row then holds $\lambda = \pm F$ and does not depend on the motion.
    pub fn saturated(
        &self,
        kind: CoordinateKind,
        coordinate: &JointCoordinate,
        start: f64,
        u_parent: &Twist,
        u_child: &Twist,
        h: f64,
    ) -> bool {
        self.law(kind, coordinate, start, u_parent, u_child, h)
            .abs()
            > self.max_force
    }

    /// The compliance $\alpha$: $1/(h^2 k_e + h k_d)$ in position mode, $1/(h k_e)$ in
    /// velocity mode.
    pub fn compliance(&self, h: f64) -> f64 {
        match self.mode {
            DriveMode::Position { .. } => 1.0 / (h * h * self.ke + h * self.kd),
            DriveMode::Velocity { .. } => 1.0 / (h * self.ke),
        }
    }

    /// The drive's generalized force at the current iterate if the row were satisfied,
    /// i.e. the PD law evaluated on `coordinate` (position mode) or $J u$ (velocity mode).
    pub fn law(
        &self,
        kind: CoordinateKind,
        coordinate: &JointCoordinate,
        start: f64,
        u_parent: &Twist,
        u_child: &Twist,
        h: f64,
    ) -> f64 {
        match self.mode {
            DriveMode::Position {
                target,
                target_velocity,
            } => {
                -self.ke * kind.difference(coordinate.value, target)
                    - self.kd * (kind.difference(coordinate.value, start) / h - target_velocity)
            }
            DriveMode::Velocity { target_velocity } => {
                -self.ke * (coordinate.jacobian.dot(u_parent, u_child) - target_velocity)
            }
        }
    }

    /// The drive's Newton row at the current iterate.
    ///
    /// `coordinate` is evaluated at $q^+$, `start` is the coordinate at the start of the
    /// step $q^-$, `u_*` the current velocity iterate, `lambda` the drive force.
    /// The residual is $\alpha h\thinspace (\lambda - \text{law})$ in both modes, which expands to
    /// the formulas of the [module documentation](self). With a largest force $F$ it is
    /// $\alpha h\thinspace (\lambda - \operatorname{clamp}(\text{law}, -F, F))$, semismooth:
    /// where the law saturates the row's Jacobian is zero and it holds $\lambda = \pm F$.
    #[allow(clippy::too_many_arguments)]
    pub fn row(
        &self,
        kind: CoordinateKind,
        coordinate: &JointCoordinate,
        start: f64,
        u_parent: &Twist,
        u_child: &Twist,
        lambda: f64,
        h: f64,
    ) -> Row {
        let alpha = self.compliance(h);
        let law = self.law(kind, coordinate, start, u_parent, u_child, h);
        let saturated = law.abs() > self.max_force;
        Row {
            residual: alpha * h * (lambda - law.clamp(-self.max_force, self.max_force)),
            jacobian: if saturated {
                RowJacobian::zeros()
            } else {
                coordinate.jacobian
            },
            compliance: alpha,
        }
    }
}

/// The coordinate of a revolute or prismatic joint from the two body poses.
pub fn coordinate(
    kind: CoordinateKind,
    frames: &crate::joint::JointFrames,
    axis: &UnitAxis,
    pose_parent: &Pose,
    pose_child: &Pose,
) -> JointCoordinate {
    let g = JointGeometry::new(frames, pose_parent, pose_child);
    match kind {
        CoordinateKind::Angle => revolute_coordinate(&g, axis),
        CoordinateKind::Displacement => prismatic_coordinate(&g, axis),
    }
}

/// Geometric stiffness of a drive row with force `lambda` (see [`Stiffness`]): the
/// slider's is that of a [slide lock](crate::joint::lock::slide_lock) along the axis
/// (the same force Jacobian); the hinge's is taken by central differences (step 1e-6
/// rad), its closed form being long and the row single.
pub fn coordinate_stiffness(
    kind: CoordinateKind,
    frames: &crate::joint::JointFrames,
    axis: &UnitAxis,
    pose_parent: &Pose,
    pose_child: &Pose,
    lambda: f64,
) -> Stiffness {
    match kind {
        CoordinateKind::Displacement => slide_lock_stiffness(
            &JointGeometry::new(frames, pose_parent, pose_child),
            &axis.vector(),
            lambda,
        ),
        CoordinateKind::Angle => Stiffness::finite_difference(
            |pa, pb| coordinate(kind, frames, axis, pa, pb).jacobian,
            pose_parent,
            pose_child,
            lambda,
            1e-6,
        ),
    }
}
