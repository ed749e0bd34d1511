//! Joints: position-level bilateral constraints between a parent and a child body.
//!
//! A joint is given by a frame on each body ([`JointFrames`], expressed relative to
//! the body's centre-of-mass frame) and the relative motion it allows. The joint error
//! $c(q)$ is measured between the two frames in the world,
//! $X_{wp} = q_P X_p$ and $X_{wc} = q_C X_c$, with anchors $p_p, p_c$ (their origins)
//! and lever arms $r_p = p_p - x_P$, $r_c = p_c - x_C$ from the centres of mass.
//!
//! | kind | rows | module |
//! |---|---|---|
//! | revolute | 3 point + 2 axis alignment | [`revolute`] |
//! | prismatic | 2 slide + 3 angle | [`prismatic`] |
//! | ball | 3 point | [`ball`] |
//! | fixed | 3 point + 3 angle | [`fixed`] |
//! | free | none | — |
//!
//! Every row is exact: its Jacobian is the derivative of its error along
//! $q \oplus G\thinspace \delta u$ perturbations (checked against finite differences in the
//! tests), not a small-angle approximation.

pub mod ball;
pub mod fixed;
pub mod lock;
pub mod prismatic;
pub mod revolute;

use axion_math::{Pose, UnitAxis};
use nalgebra::{Isometry3, UnitQuaternion, Vector3};

use crate::error::{ConstraintError, non_negative, unit_interval};
use crate::row::{PositionRow, Row, compliant_row};
use crate::stiffness::Stiffness;

/// The joint frame on each body, relative to that body's centre-of-mass frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointFrames {
    /// $X_p$: joint frame in the parent's COM frame (world frame if the parent is the world).
    pub parent: Isometry3<f64>,
    /// $X_c$: joint frame in the child's COM frame.
    pub child: Isometry3<f64>,
}

impl JointFrames {
    /// Validates both frames (finite translation and quaternion).
    pub fn new(parent: Isometry3<f64>, child: Isometry3<f64>) -> Result<Self, ConstraintError> {
        for frame in [&parent, &child] {
            let c = axion_math::pose_coords(frame);
            axion_math::pose_from_coords(&[c[0], c[1], c[2], c[3], c[4], c[5], c[6]])?;
        }
        Ok(Self { parent, child })
    }

    /// Frames with identity orientation at the given anchors.
    pub fn at_anchors(
        parent_anchor: Vector3<f64>,
        child_anchor: Vector3<f64>,
    ) -> Result<Self, ConstraintError> {
        Self::new(
            Isometry3::translation(parent_anchor.x, parent_anchor.y, parent_anchor.z),
            Isometry3::translation(child_anchor.x, child_anchor.y, child_anchor.z),
        )
    }
}

/// World-frame quantities of a joint at one configuration, shared by all its rows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointGeometry {
    /// $X_{wp} = q_P X_p$.
    pub frame_parent: Pose,
    /// $X_{wc} = q_C X_c$.
    pub frame_child: Pose,
    /// $r_p = p_p - x_P$.
    pub r_parent: Vector3<f64>,
    /// $r_c = p_c - x_C$.
    pub r_child: Vector3<f64>,
}

impl JointGeometry {
    /// Evaluates the joint frames at the poses of parent and child.
    #[inline]
    pub fn new(frames: &JointFrames, pose_parent: &Pose, pose_child: &Pose) -> Self {
        let frame_parent = pose_parent * frames.parent;
        let frame_child = pose_child * frames.child;
        Self {
            r_parent: frame_parent.translation.vector - pose_parent.translation.vector,
            r_child: frame_child.translation.vector - pose_child.translation.vector,
            frame_parent,
            frame_child,
        }
    }

    /// $p_c - p_p$: separation of the anchors.
    #[inline]
    pub fn separation(&self) -> Vector3<f64> {
        self.frame_child.translation.vector - self.frame_parent.translation.vector
    }

    /// $\theta_{wp}^{-1} \otimes \theta_{wc}$: child joint frame seen from the parent's.
    #[inline]
    pub fn relative_rotation(&self) -> UnitQuaternion<f64> {
        self.frame_parent.rotation.inverse() * self.frame_child.rotation
    }
}

/// The relative motion a joint allows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum JointKind {
    /// Rotation about `axis` (joint frame).
    Revolute {
        /// Hinge axis in the joint frame.
        axis: UnitAxis,
    },
    /// Translation along `axis` (joint frame).
    Prismatic {
        /// Slide axis in the joint frame.
        axis: UnitAxis,
    },
    /// Any rotation about the common anchor.
    Ball,
    /// No relative motion.
    Fixed,
    /// Any motion (no rows).
    Free,
}

/// A joint: kind, frames and compliance $\varepsilon$ (m/N; 0 = rigid).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Joint {
    /// What the joint allows.
    pub kind: JointKind,
    /// Where it sits on each body.
    pub frames: JointFrames,
    /// Compliance $\varepsilon \ge 0$ of every row (see [`compliant_row`]).
    pub compliance: f64,
    /// `Some(Υ)`: the rows are velocity-level with Baumgarte factor $\Upsilon \in [0, 1]$
    /// ([`velocity_row`](crate::row::velocity_row)); `None` (the default): position-level
    /// ([`compliant_row`]), exact at $q^+$.
    pub baumgarte: Option<f64>,
}

impl Joint {
    /// Validates the compliance (finite, `≥ 0`) and builds the joint.
    pub fn new(
        kind: JointKind,
        frames: JointFrames,
        compliance: f64,
    ) -> Result<Self, ConstraintError> {
        non_negative("joint compliance", compliance)?;
        Ok(Self {
            kind,
            frames,
            compliance,
            baumgarte: None,
        })
    }

    /// The same joint at velocity level with Baumgarte factor `baumgarte` $\in [0, 1]$
    /// (see [`velocity_row`](crate::row::velocity_row)).
    pub fn velocity_level(mut self, baumgarte: f64) -> Result<Self, ConstraintError> {
        self.baumgarte = Some(unit_interval("Baumgarte factor", baumgarte)?);
        Ok(self)
    }

    /// Number of scalar rows the joint contributes.
    #[inline]
    pub fn row_count(&self) -> usize {
        match self.kind {
            JointKind::Revolute { .. } | JointKind::Prismatic { .. } => 5,
            JointKind::Ball => 3,
            JointKind::Fixed => 6,
            JointKind::Free => 0,
        }
    }

    /// Whether row `i` measures a distance (point and slide locks, m) rather than an
    /// angle (angle locks and axis alignments, rad).
    #[inline]
    pub fn row_is_positional(&self, i: usize) -> bool {
        match self.kind {
            JointKind::Revolute { .. } | JointKind::Fixed => i < 3,
            JointKind::Prismatic { .. } => i < 2,
            JointKind::Ball => true,
            JointKind::Free => false,
        }
    }

    /// Appends the joint's [`row_count`](Self::row_count) position rows to `out`.
    #[inline]
    pub fn position_rows(&self, pose_parent: &Pose, pose_child: &Pose, out: &mut Vec<PositionRow>) {
        let g = JointGeometry::new(&self.frames, pose_parent, pose_child);
        match self.kind {
            JointKind::Revolute { axis } => out.extend(revolute::rows(&g, &axis)),
            JointKind::Prismatic { axis } => out.extend(prismatic::rows(&g, &axis)),
            JointKind::Ball => out.extend(ball::rows(&g)),
            JointKind::Fixed => out.extend(fixed::rows(&g)),
            JointKind::Free => {}
        }
    }

    /// Geometric stiffness of all the joint's rows for multipliers `lambda` (one per
    /// row), see [`Stiffness`].
    ///
    /// # Panics
    /// If `lambda.len() != self.row_count()` (a solver bug, not a user input).
    #[inline]
    pub fn stiffness(&self, pose_parent: &Pose, pose_child: &Pose, lambda: &[f64]) -> Stiffness {
        assert_eq!(
            lambda.len(),
            self.row_count(),
            "one multiplier per joint row"
        );
        let g = JointGeometry::new(&self.frames, pose_parent, pose_child);
        match self.kind {
            JointKind::Revolute { axis } => {
                revolute::stiffness(&g, &axis, lambda.try_into().expect("5 rows"))
            }
            JointKind::Prismatic { axis } => {
                prismatic::stiffness(&g, &axis, lambda.try_into().expect("5 rows"))
            }
            JointKind::Ball => ball::stiffness(&g, lambda.try_into().expect("3 rows")),
            JointKind::Fixed => fixed::stiffness(&g, lambda.try_into().expect("6 rows")),
            JointKind::Free => Stiffness::zeros(),
        }
    }

    /// Appends the linearised Newton rows (see [`compliant_row`]) for multipliers
    /// `lambda` (one per row) and step `h`.
    ///
    /// # Panics
    /// If `lambda.len() != self.row_count()` (a solver bug, not a user input).
    pub fn rows(
        &self,
        pose_parent: &Pose,
        pose_child: &Pose,
        lambda: &[f64],
        h: f64,
        out: &mut Vec<Row>,
    ) {
        assert_eq!(
            lambda.len(),
            self.row_count(),
            "one multiplier per joint row"
        );
        let mut position = Vec::with_capacity(6);
        self.position_rows(pose_parent, pose_child, &mut position);
        out.extend(
            position
                .iter()
                .zip(lambda)
                .map(|(p, &l)| compliant_row(p, l, self.compliance, h)),
        );
    }
}
