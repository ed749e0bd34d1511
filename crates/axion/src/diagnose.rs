//! What a model's initial state asks of the first step: shapes that already overlap,
//! joints whose two frames start apart, joint coordinates outside their range. Each is
//! removed by the first step, so each is a velocity the first step will create; `axion
//! check` and the run summary print them.

use std::fmt;

use axion_collision::{CollisionError, CollisionWorld};
use axion_constraints::drive::coordinate;
use axion_math::Pose;
use axion_model::{BodyId, Model};

/// Search margin (m) for the initial contacts: parry reports no contact between faces
/// that touch exactly at 0.
const MARGIN: f64 = 0.02;

/// The violations present in a model's initial poses.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InitialState {
    /// The deepest overlap of two shapes (m, positive) and their bodies, if any shapes
    /// overlap.
    pub penetration: Option<(f64, String, String)>,
    /// The largest joint error at the start: anchors apart (m) or axes misaligned (rad),
    /// with the joint, when it is above 1e-12.
    pub joint_gap: Option<JointGap>,
    /// Joints whose coordinate starts outside their range.
    pub out_of_range: Vec<RangeViolation>,
}

/// A joint whose frames do not start together.
#[derive(Clone, Debug, PartialEq)]
pub struct JointGap {
    /// The joint.
    pub joint: String,
    /// Its largest row error.
    pub error: f64,
    /// `"m"` for anchors apart, `"rad"` for a misalignment.
    pub unit: &'static str,
}

/// A joint coordinate outside its range.
#[derive(Clone, Debug, PartialEq)]
pub struct RangeViolation {
    /// The joint.
    pub joint: String,
    /// Its coordinate (rad or m).
    pub value: f64,
    /// Its range.
    pub lower: f64,
    /// Its range.
    pub upper: f64,
    /// How far outside (rad or m, positive).
    pub by: f64,
}

/// Joint errors at or below this (m or rad) are rounding, not a gap.
const GAP_FLOOR: f64 = 1e-12;

/// Measures the violations of `model`'s initial poses.
pub fn initial_state(model: &Model) -> Result<InitialState, CollisionError> {
    let poses: Vec<Pose> = model.bodies().iter().map(|b| b.initial_pose).collect();
    violations(model, &poses)
}

/// Measures the violations of the centre-of-mass poses `poses` (one per body, as
/// [`crate::State::world_poses`] gives them).
pub fn violations(model: &Model, poses: &[Pose]) -> Result<InitialState, CollisionError> {
    let pose_of = |b: Option<BodyId>| b.map_or(Pose::identity(), |b| poses[b.0]);
    let mut report = InitialState::default();

    let mut contacts = Vec::new();
    CollisionWorld::new(model)?.detect(poses, MARGIN, &mut contacts);
    if let Some(c) = contacts
        .iter()
        .filter(|c| c.gap < 0.0)
        .min_by(|a, b| a.gap.total_cmp(&b.gap))
    {
        let name = |b: BodyId| model.bodies()[b.0].name.clone();
        report.penetration = Some((-c.gap, name(c.body_a), name(c.body_b)));
    }

    let mut rows = Vec::with_capacity(6);
    for j in model.joints() {
        let (parent, child) = (pose_of(j.parent), pose_of(Some(j.child)));
        rows.clear();
        j.joint.position_rows(&parent, &child, &mut rows);
        for (i, r) in rows.iter().enumerate() {
            let error = r.error.abs();
            if error > GAP_FLOOR && report.joint_gap.as_ref().is_none_or(|g| error > g.error) {
                let unit = if j.joint.row_is_positional(i) {
                    "m"
                } else {
                    "rad"
                };
                report.joint_gap = Some(JointGap {
                    joint: j.name.clone(),
                    error,
                    unit,
                });
            }
        }
        let Some(range) = j.range() else { continue };
        let value = coordinate(
            range.coordinate,
            &j.joint.frames,
            &range.axis,
            &parent,
            &child,
        )
        .value;
        let relative = range.relative(value);
        let reference = range.reference();
        let below = (range.lower - reference) - relative;
        let above = relative - (range.upper - reference);
        let by = below.max(above);
        if by > GAP_FLOOR {
            report.out_of_range.push(RangeViolation {
                joint: j.name.clone(),
                value: reference + relative,
                lower: range.lower,
                upper: range.upper,
                by,
            });
        }
    }
    Ok(report)
}

impl InitialState {
    /// Whether nothing is violated.
    pub fn is_clean(&self) -> bool {
        self.penetration.is_none() && self.joint_gap.is_none() && self.out_of_range.is_empty()
    }
}

impl fmt::Display for InitialState {
    /// One line, e.g. `initial state: shapes overlap 2.1e-2 m (trunk, FL_calf); joint
    /// "knee" 3.0e-1 rad outside [-2.7, -0.9]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_clean() {
            return write!(
                f,
                "initial state: no overlap, every joint closed and in its range"
            );
        }
        let mut parts = Vec::new();
        if let Some((depth, a, b)) = &self.penetration {
            parts.push(format!("shapes overlap by {depth:.2e} m ({a:?} and {b:?})"));
        }
        if let Some(g) = &self.joint_gap {
            parts.push(format!(
                "joint {:?} starts {:.2e} {} apart",
                g.joint, g.error, g.unit
            ));
        }
        if !self.out_of_range.is_empty() {
            let shown: Vec<String> = self
                .out_of_range
                .iter()
                .take(4)
                .map(|v| {
                    format!(
                        "{:?} at {:.3} outside [{:.3}, {:.3}] by {:.2e}",
                        v.joint, v.value, v.lower, v.upper, v.by
                    )
                })
                .collect();
            let more = if self.out_of_range.len() > 4 {
                ", …"
            } else {
                ""
            };
            parts.push(format!(
                "{} joints outside their range: {}{more}",
                self.out_of_range.len(),
                shown.join(", ")
            ));
        }
        let d = crate::SolverSettings::default();
        write!(
            f,
            "initial state: {} (the CPU solver removes each at its recovery speed, \
             {} m/s and {} rad/s unless set; the GPU in one step)",
            parts.join("; "),
            d.recovery_speed,
            d.recovery_rate
        )
    }
}
