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
//! **Force mode** (an actuator's torque or force command $\tau$, MuJoCo's `motor`) has
//! no gains: $\lambda = \tau$. Its row does not depend on the motion (zero Jacobian,
//! like a saturated drive), $h_{drive} = \alpha h(\lambda - \tau)$ with $\alpha = 1/h$,
//! and its force acts on the two bodies through the coordinate's Jacobian at $q^+$: an
//! implicit joint force, exerted along the hinge axis or slide where the step ends.
//!
//! **Armature** (a rotor's inertia $a$ reflected to the joint, MuJoCo's `armature`) is
//! the joint force $-a\thinspace\ddot q$, discretised as the step's change of the joint
//! rate, $\lambda = -a\thinspace(\dot q^+ - \dot q^-)/h$: a velocity row with target
//! $\dot q^-$ (`start`, the rate at the start of the step) and gain $a/h$,
//! $$h_{drive} = \dot q^+ - \dot q^- + \alpha h\lambda,\qquad \alpha = \frac1a.$$
//! It adds $a$ to the joint's effective inertia, as a term $a$ on the diagonal of the
//! joint-space mass matrix does.
//!
//! Every mode adds a **feed-forward force** $\tau$ to its law (0 unless set: the
//! torque of a PD-plus-feed-forward controller, gravity compensation); in force mode it
//! is the whole law. A largest force $F$ bounds the law with the feed-forward included.
//!
//! For a revolute joint, position differences are wrapped to $[-\pi, \pi)$.

use axion_math::{Pose, Twist, UnitAxis, wrap_angle};
use nalgebra::{Matrix3, Vector3};

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
#[inline]
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
#[inline]
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
    #[inline]
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
    /// Exert the feed-forward force $\tau$ ([`Drive::force`]) and nothing else.
    Force,
    /// The joint's armature $a$ ([`Drive::armature`]): $\lambda = -a(\dot q^+ - \dot q^-)/h$.
    Armature,
}

/// A validated drive: mode, stiffness $k_e$ and damping $k_d$, feed-forward force
/// $\tau$ and the largest force $F$ it exerts (an actuator's effort limit; unlimited
/// by default).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Drive {
    mode: DriveMode,
    ke: f64,
    kd: f64,
    max_force: f64,
    force: f64,
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
            force: 0.0,
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
            force: 0.0,
        })
    }

    /// A force drive exerting `force` $\tau$ (N·m or N) on its joint: an actuator
    /// commanded in torque (MuJoCo's `motor`). Errors: a force that is not finite.
    pub fn force(force: f64) -> Result<Self, ConstraintError> {
        axion_math::error::ensure_finite("drive force", force)?;
        Ok(Self {
            mode: DriveMode::Force,
            ke: 0.0,
            kd: 0.0,
            max_force: f64::INFINITY,
            force,
        })
    }

    /// The mode and its targets.
    #[inline]
    pub fn mode(&self) -> DriveMode {
        self.mode
    }
    /// A joint's armature $a > 0$ (kg·m² or kg, [`DriveMode::Armature`]), stored as
    /// $k_e$. Errors: $a$ not positive and finite.
    pub fn armature(armature: f64) -> Result<Self, ConstraintError> {
        axion_math::error::ensure_finite("armature", armature)?;
        if armature <= 0.0 {
            return Err(ConstraintError::NotPositive {
                what: "armature",
                value: armature,
            });
        }
        Ok(Self {
            mode: DriveMode::Armature,
            ke: armature,
            kd: 0.0,
            max_force: f64::INFINITY,
            force: 0.0,
        })
    }

    /// The feed-forward force $\tau$ (N·m or N) added to the law; in force mode, the
    /// whole force.
    pub fn feedforward(&self) -> f64 {
        self.force
    }

    /// This drive with feed-forward force $\tau$ (in force mode: its force). Errors: a
    /// force that is not finite.
    pub fn with_feedforward(self, force: f64) -> Result<Self, ConstraintError> {
        axion_math::error::ensure_finite("drive force", force)?;
        Ok(Self { force, ..self })
    }

    /// Stiffness (position mode), velocity gain (velocity mode) or armature $k_e$.
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

    /// The compliance $\alpha$: $1/(h^2 k_e + h k_d)$ in position mode, $1/(h k_e)$ in
    /// velocity mode, $1/h$ in force mode (its row is $\lambda - \tau = 0$), $1/a$ for an
    /// armature.
    #[inline]
    pub fn compliance(&self, h: f64) -> f64 {
        match self.mode {
            DriveMode::Position { .. } => 1.0 / (h * h * self.ke + h * self.kd),
            DriveMode::Velocity { .. } => 1.0 / (h * self.ke),
            DriveMode::Force => 1.0 / h,
            DriveMode::Armature => 1.0 / self.ke,
        }
    }

    /// Whether the drive's `start` value ([`Drive::row`]) is the joint's rate at the
    /// start of the step (an armature) rather than its coordinate.
    pub fn starts_from_rate(&self) -> bool {
        matches!(self.mode, DriveMode::Armature)
    }

    /// Whether the row depends on the motion: not in force mode, nor where the law
    /// saturates.
    #[inline]
    pub fn moves_with_motion(
        &self,
        kind: CoordinateKind,
        coordinate: &JointCoordinate,
        start: f64,
        u_parent: &Twist,
        u_child: &Twist,
        h: f64,
    ) -> bool {
        self.moves_under(self.law(kind, coordinate, start, u_parent, u_child, h))
    }

    /// [`Drive::moves_with_motion`] where the law evaluates to `law`.
    #[inline]
    fn moves_under(&self, law: f64) -> bool {
        !matches!(self.mode, DriveMode::Force) && law.abs() <= self.max_force
    }

    /// The drive's generalized force at the current iterate if the row were satisfied:
    /// the feed-forward force plus the PD law evaluated on `coordinate` (position mode)
    /// or $J u$ (velocity mode).
    #[inline]
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
                self.force
                    - self.ke * kind.difference(coordinate.value, target)
                    - self.kd * (kind.difference(coordinate.value, start) / h - target_velocity)
            }
            DriveMode::Velocity { target_velocity } => {
                self.force
                    - self.ke * (coordinate.jacobian.dot(u_parent, u_child) - target_velocity)
            }
            DriveMode::Force => self.force,
            DriveMode::Armature => {
                self.force - self.ke * (coordinate.jacobian.dot(u_parent, u_child) - start) / h
            }
        }
    }

    /// The drive's Newton row at the current iterate.
    ///
    /// `coordinate` is evaluated at $q^+$, `start` is the coordinate at the start of the
    /// step $q^-$ (for an armature its rate $\dot q^-$, see
    /// [`Drive::starts_from_rate`]), `u_*` the current velocity iterate, `lambda` the
    /// drive force.
    /// The residual is $\alpha h\thinspace (\lambda - \text{law})$ in both modes, which expands to
    /// the formulas of the [module documentation](self). With a largest force $F$ it is
    /// $\alpha h\thinspace (\lambda - \operatorname{clamp}(\text{law}, -F, F))$, semismooth:
    /// where the law saturates the row's Jacobian is zero and it holds $\lambda = \pm F$
    /// (in force mode always zero, see [`Drive::moves_with_motion`]).
    #[allow(clippy::too_many_arguments)]
    #[inline]
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
        let moves = self.moves_under(law);
        Row {
            residual: alpha * h * (lambda - law.clamp(-self.max_force, self.max_force)),
            jacobian: if moves {
                coordinate.jacobian
            } else {
                RowJacobian::zeros()
            },
            compliance: alpha,
        }
    }
}

/// The coordinate of a revolute or prismatic joint from the two body poses.
#[inline]
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
/// (the same force Jacobian), the hinge's [`revolute_coordinate_stiffness`]. Zero, and
/// not evaluated, when `lambda` is zero (a motor at zero force, a damper at rest).
#[inline]
pub fn coordinate_stiffness(
    kind: CoordinateKind,
    frames: &crate::joint::JointFrames,
    axis: &UnitAxis,
    pose_parent: &Pose,
    pose_child: &Pose,
    lambda: f64,
) -> Stiffness {
    if lambda == 0.0 {
        return Stiffness::zeros();
    }
    let g = JointGeometry::new(frames, pose_parent, pose_child);
    match kind {
        CoordinateKind::Displacement => slide_lock_stiffness(&g, &axis.vector(), lambda),
        CoordinateKind::Angle => revolute_coordinate_stiffness(&g, axis, lambda),
    }
}

/// Geometric stiffness of a hinge coordinate's torque $\pm\lambda a_w$,
/// $a_w = R_P\thinspace\ell(Q)$ ([`revolute_coordinate`]: $R_P$ the parent joint frame,
/// $Q = R_P^\top R_C = (w, \mathbf v)$, $\ell = N/d$ with
/// $N = w^2 a + w\thinspace(\mathbf v\times a) + s\thinspace\mathbf v$, $d = w^2 + s^2$,
/// $s = \mathbf v\cdot a$). Rotating the parent by $\delta\phi_p$ and the child by
/// $\delta\phi_c$ (world axes) turns $Q$ by $\varepsilon = R_P^\top(\delta\phi_c - \delta\phi_p)$,
/// $\delta w = -\tfrac12\varepsilon\cdot\mathbf v$,
/// $\delta\mathbf v = \tfrac12(w I - \mathbf v^\times)\varepsilon$, so
/// $$\delta a_w = -a_w^\times\delta\phi_p + P(\delta\phi_c - \delta\phi_p),\qquad
///   P = R_P\Big(\frac{\partial\ell}{\partial w}\frac{\partial w}{\partial\varepsilon} +
///   \frac{\partial\ell}{\partial\mathbf v}\frac{\partial\mathbf v}{\partial\varepsilon}\Big)R_P^\top,$$
/// $$\frac{\partial\ell}{\partial w} = \frac{2w a + \mathbf v\times a - 2w\ell}{d},\qquad
///   \frac{\partial\ell}{\partial\mathbf v} = \frac{-wa^\times + \mathbf v a^\top + sI - 2s\thinspace\ell a^\top}{d},$$
/// ($x^\times$ the cross-product matrix, $x^\times y = x\times y$) and the torque blocks
/// (parent 0, child 1) are $K_{1c} = \lambda P$, $K_{1p} = -\lambda(a_w^\times + P)$,
/// $K_{0c} = -\lambda P$, $K_{0p} = \lambda(a_w^\times + P)$.
/// Where $d$ vanishes (the child turned a half turn about an axis normal to $a$),
/// [`revolute_coordinate`] holds $\ell = a$ and so does this ($P = 0$).
#[inline]
pub fn revolute_coordinate_stiffness(g: &JointGeometry, axis: &UnitAxis, lambda: f64) -> Stiffness {
    let a = axis.vector();
    let rel = g.relative_rotation();
    let (w, v) = (rel.w, rel.imag());
    let s = v.dot(&a);
    let d = w * w + s * s;
    let r_p = g.frame_parent.rotation.to_rotation_matrix().into_inner();
    let (local, p) = if d > f64::MIN_POSITIVE {
        let l = (a * (w * w) + v.cross(&a) * w + v * s) / d;
        let dl_dw = (a * (2.0 * w) + v.cross(&a) - l * (2.0 * w)) / d;
        let dl_dv = (-a.cross_matrix() * w + v * a.transpose() + Matrix3::identity() * s
            - l * a.transpose() * (2.0 * s))
            / d;
        let d_eps = dl_dw * (v.transpose() * -0.5)
            + dl_dv * ((Matrix3::identity() * w - v.cross_matrix()) * 0.5);
        (l, r_p * d_eps * r_p.transpose())
    } else {
        (a, Matrix3::zeros())
    };
    let cross = (r_p * local).cross_matrix();
    let mut k = Stiffness::zeros();
    k.add(1, 1, 1, 1, &(p * lambda));
    k.add(1, 0, 1, 1, &((cross + p) * -lambda));
    k.add(0, 1, 1, 1, &(p * -lambda));
    k.add(0, 0, 1, 1, &((cross + p) * lambda));
    k
}
