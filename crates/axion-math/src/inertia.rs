//! Mass properties, world inertia and the block-diagonal mass matrix $\tilde M$.

use nalgebra::{Matrix3, SymmetricEigen, UnitQuaternion, Vector3};

use crate::error::{MathError, ensure_all_finite, ensure_finite};
use crate::pose::{Twist, Wrench, angular, linear, twist};

/// Relative tolerance of the symmetry and triangle-inequality checks on inertia tensors.
const INERTIA_TOLERANCE: f64 = 1e-9;

/// The principal moments of a symmetric tensor, ascending, with the principal axes as
/// the matching columns of a rotation matrix $Q$: $I = Q \operatorname{diag}(\lambda) Q^\top$.
pub fn principal_moments(inertia: &Matrix3<f64>) -> ([f64; 3], Matrix3<f64>) {
    let eigen = SymmetricEigen::new(*inertia);
    let mut order = [0, 1, 2];
    order.sort_by(|&a, &b| eigen.eigenvalues[a].total_cmp(&eigen.eigenvalues[b]));
    let moments = order.map(|k| eigen.eigenvalues[k]);
    let axes = Matrix3::from_columns(&order.map(|k| eigen.eigenvectors.column(k).into_owned()));
    (moments, axes)
}

/// Whether ascending moments break the triangle inequality $I_3 \le I_1 + I_2$ beyond
/// the relative tolerance of [`MassProperties::new`].
fn violates_triangle(m: [f64; 3]) -> bool {
    m[2] > (m[0] + m[1]) * (1.0 + INERTIA_TOLERANCE)
}

/// Mass, centre of mass and inertia about it of rigidly joined parts, each given as
/// (mass $m_i$, centre $c_i$, inertia $I_i$ about $c_i$), all in one frame:
/// $m = \sum m_i$, $c = \sum m_i c_i / m$ and
/// $I = \sum I_i + m_i (\lVert d_i \rVert^2 \mathbb 1 - d_i d_i^\top)$ with
/// $d_i = c_i - c$ (the parallel-axis theorem). `None` when the total mass is not
/// positive.
pub fn combine_parts(
    parts: &[(f64, Vector3<f64>, Matrix3<f64>)],
) -> Option<(f64, Vector3<f64>, Matrix3<f64>)> {
    let mass: f64 = parts.iter().map(|p| p.0).sum();
    if mass <= 0.0 {
        return None;
    }
    let com = parts.iter().map(|p| p.0 * p.1).sum::<Vector3<f64>>() / mass;
    let inertia = parts.iter().fold(Matrix3::zeros(), |acc, (m, c, i)| {
        let d = c - com;
        acc + i + (Matrix3::identity() * d.norm_squared() - d * d.transpose()) * *m
    });
    Some((mass, com, inertia))
}

/// What [`repair_inertia`] did with a tensor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum InertiaRepair {
    /// The tensor is a valid inertia as it is ([`MassProperties::new`] accepts it).
    Valid,
    /// The tensor was not valid; `inertia` is the repaired one, with the same principal
    /// axes, and the principal moments (ascending) before and after.
    Repaired {
        /// Moments as given.
        before: [f64; 3],
        /// Moments of `inertia`.
        after: [f64; 3],
        /// The repaired tensor.
        inertia: Matrix3<f64>,
    },
    /// Every moment is zero or negative: there is no inertia to repair.
    Empty {
        /// Moments as given.
        moments: [f64; 3],
    },
}

/// Smallest principal moment a repair leaves, relative to the largest.
pub const REPAIR_FLOOR: f64 = 1e-6;

/// Repairs a symmetric tensor that is not a physical inertia, keeping its principal axes
/// and moving its principal moments $\lambda_1 \le \lambda_2 \le \lambda_3$ as little
/// as possible:
///
/// 1. negative moments become 0;
/// 2. if $\lambda_3 > \lambda_1 + \lambda_2$, the moments are projected onto the plane
///    $\lambda_3 = \lambda_1 + \lambda_2$ (the nearest point of the valid set, in the
///    Euclidean norm of the moments): with $\delta = (\lambda_3 - \lambda_1 - \lambda_2)/3$,
///    $\lambda_{1,2} \mathrel{+}= \delta$ and $\lambda_3 \mathrel{-}= \delta$;
/// 3. a moment still below [`REPAIR_FLOOR`]$\,\lambda_3$ is raised to it (a thin rod's
///    zero moment about its axis).
///
/// MuJoCo's `balanceinertia` instead sets all three moments to their mean.
pub fn repair_inertia(inertia: &Matrix3<f64>) -> InertiaRepair {
    let sym = (inertia + inertia.transpose()) * 0.5;
    let (before, axes) = principal_moments(&sym);
    if before[0] > 0.0 && !violates_triangle(before) {
        return InertiaRepair::Valid;
    }
    let mut m = before.map(|x| x.max(0.0));
    if m[2] <= 0.0 {
        return InertiaRepair::Empty { moments: before };
    }
    if m[2] > m[0] + m[1] {
        let delta = (m[2] - m[0] - m[1]) / 3.0;
        m = [m[0] + delta, m[1] + delta, m[2] - delta];
    }
    let floor = REPAIR_FLOOR * m[2];
    let after = m.map(|x| x.max(floor));
    let inertia = axes * Matrix3::from_diagonal(&Vector3::from(after)) * axes.transpose();
    InertiaRepair::Repaired {
        before,
        after,
        inertia: (inertia + inertia.transpose()) * 0.5,
    }
}

/// Mass $m$ and body-frame inertia $I_b$ about the centre of mass, with their inverses.
///
/// A static (or kinematic) body has infinite mass: both inverses are zero, see
/// [`MassProperties::infinite`]. A massless frame (between the joints of a compound
/// joint) has zero mass and inertia; its inverses are those of the body it carries, see
/// [`MassProperties::massless`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MassProperties {
    mass: f64,
    inertia: Matrix3<f64>,
    inv_mass: f64,
    inv_inertia: Matrix3<f64>,
    /// $\sqrt{\max_i I_{b,ii} / m}$ (see [`MassProperties::radius_of_gyration`]).
    gyration: f64,
}

/// $R\thinspace B R^\top v$ for a body-frame matrix $B$ (an inertia or its inverse), as
/// three matrix–vector products rather than the world matrix $RBR^\top$ and one.
#[inline]
fn rotated(rotation: &UnitQuaternion<f64>, body: &Matrix3<f64>, v: &Vector3<f64>) -> Vector3<f64> {
    let r = rotation.to_rotation_matrix();
    r.matrix() * (body * r.matrix().tr_mul(v))
}

/// $\sqrt{\max_i I_{ii} / m}$.
fn gyration(mass: f64, inertia: &Matrix3<f64>) -> f64 {
    (inertia[(0, 0)].max(inertia[(1, 1)]).max(inertia[(2, 2)]) / mass).sqrt()
}

impl MassProperties {
    /// Validates and builds mass properties.
    ///
    /// Errors: non-finite entries, `mass ≤ 0`, an asymmetric tensor, a principal moment
    /// `≤ 0`, or moments violating the triangle inequality $I_1 \le I_2 + I_3$
    /// (relative tolerance 1e-9, so a thin rod's $I_1 = 0$ is still refused but
    /// rounding in a computed tensor is not).
    pub fn new(mass: f64, inertia: Matrix3<f64>) -> Result<Self, MathError> {
        ensure_finite("mass", mass)?;
        ensure_all_finite("inertia entry", inertia.iter())?;
        if mass <= 0.0 {
            return Err(MathError::NonPositiveMass { mass });
        }
        let scale = inertia.abs().max().max(f64::MIN_POSITIVE);
        let asymmetry = (inertia - inertia.transpose()).abs().max();
        if asymmetry > INERTIA_TOLERANCE * scale {
            return Err(MathError::InertiaNotSymmetric { asymmetry });
        }
        let sym = (inertia + inertia.transpose()) * 0.5;
        let (moments, _) = principal_moments(&sym);
        if moments[0] <= 0.0 {
            return Err(MathError::NonPositiveInertia { moments });
        }
        if violates_triangle(moments) {
            return Err(MathError::InertiaTriangleInequality { moments });
        }
        let inv_inertia = sym
            .try_inverse()
            .ok_or(MathError::NonPositiveInertia { moments })?;
        Ok(Self {
            mass,
            inertia: sym,
            inv_mass: 1.0 / mass,
            inv_inertia,
            gyration: gyration(mass, &sym),
        })
    }

    /// A massless frame carrying the body of mass properties `carried`: zero mass and
    /// inertia (momentum, kinetic energy and weight are zero), while the inverses and
    /// the radius of gyration are `carried`'s. A frame's motion is fixed by its joints,
    /// never by its inertia, so its inverses only scale: the solver's residual norms,
    /// regularisation and row weights see the frame as the body it carries, and never
    /// divide by its zero mass.
    ///
    /// Errors with [`MathError::NonPositiveMass`] when `carried` is not a body of
    /// finite positive mass (static, or itself massless).
    pub fn massless(carried: &MassProperties) -> Result<Self, MathError> {
        if !(carried.mass.is_finite() && carried.mass > 0.0) {
            return Err(MathError::NonPositiveMass { mass: carried.mass });
        }
        Ok(Self {
            mass: 0.0,
            inertia: Matrix3::zeros(),
            inv_mass: carried.inv_mass,
            inv_inertia: carried.inv_inertia,
            gyration: carried.gyration,
        })
    }

    /// Whether this is a massless frame ([`MassProperties::massless`]).
    #[inline]
    pub fn is_massless(&self) -> bool {
        self.mass == 0.0
    }

    /// $\sqrt{\max_i I_{b,ii} / m}$: the length that turns an angular velocity into a
    /// speed in residual norms (a massless frame's: that of the body it carries; 0 for
    /// a static body).
    pub fn radius_of_gyration(&self) -> f64 {
        self.gyration
    }

    /// A solid box of full side lengths `size` and the given mass, about its centre.
    pub fn solid_box(mass: f64, size: Vector3<f64>) -> Result<Self, MathError> {
        let s2 = size.component_mul(&size);
        let k = mass / 12.0;
        Self::new(
            mass,
            Matrix3::from_diagonal(&(Vector3::new(s2.y + s2.z, s2.x + s2.z, s2.x + s2.y) * k)),
        )
    }

    /// A solid sphere of radius `radius` and the given mass.
    pub fn solid_sphere(mass: f64, radius: f64) -> Result<Self, MathError> {
        Self::new(mass, Matrix3::identity() * (0.4 * mass * radius * radius))
    }

    /// Infinite mass and inertia (a static or kinematic body): zero inverses.
    pub fn infinite() -> Self {
        Self {
            mass: f64::INFINITY,
            inertia: Matrix3::from_diagonal_element(f64::INFINITY),
            inv_mass: 0.0,
            inv_inertia: Matrix3::zeros(),
            gyration: 0.0,
        }
    }

    /// Mass in kg (infinite for a static body).
    #[inline]
    pub fn mass(&self) -> f64 {
        self.mass
    }
    /// Inverse mass (zero for a static body; that of the carried body for a massless
    /// frame).
    #[inline]
    pub fn inv_mass(&self) -> f64 {
        self.inv_mass
    }
    /// Body-frame inertia about the COM.
    #[inline]
    pub fn inertia(&self) -> &Matrix3<f64> {
        &self.inertia
    }
    /// Body-frame inverse inertia (zero for a static body; that of the carried body for
    /// a massless frame).
    #[inline]
    pub fn inv_inertia(&self) -> &Matrix3<f64> {
        &self.inv_inertia
    }

    /// World inertia $I_w = R(\theta)\thinspace  I_b\thinspace  R(\theta)^\top$.
    #[inline]
    pub fn world_inertia(&self, rotation: &UnitQuaternion<f64>) -> Matrix3<f64> {
        let r = rotation.to_rotation_matrix();
        r.matrix() * self.inertia * r.matrix().transpose()
    }

    /// World inverse inertia $I_w^{-1} = R(\theta)\thinspace  I_b^{-1}\thinspace  R(\theta)^\top$.
    #[inline]
    pub fn world_inv_inertia(&self, rotation: &UnitQuaternion<f64>) -> Matrix3<f64> {
        let r = rotation.to_rotation_matrix();
        r.matrix() * self.inv_inertia * r.matrix().transpose()
    }

    /// Momentum $\tilde M(\theta)\thinspace u = (m v,\ I_w \omega)$.
    #[inline]
    pub fn momentum(&self, rotation: &UnitQuaternion<f64>, u: &Twist) -> Wrench {
        twist(
            linear(u) * self.mass,
            rotated(rotation, &self.inertia, &angular(u)),
        )
    }

    /// Velocity change $\tilde M(\theta)^{-1} f = (f_{lin}/m,\ I_w^{-1} \tau)$ (for a
    /// massless frame, that of the body it carries: a scale, see
    /// [`MassProperties::massless`]).
    #[inline]
    pub fn inverse_apply(&self, rotation: &UnitQuaternion<f64>, f: &Wrench) -> Twist {
        twist(
            linear(f) * self.inv_mass,
            rotated(rotation, &self.inv_inertia, &angular(f)),
        )
    }

    /// Kinetic energy $\tfrac12 u^\top \tilde M u$.
    #[inline]
    pub fn kinetic_energy(&self, rotation: &UnitQuaternion<f64>, u: &Twist) -> f64 {
        0.5 * u.dot(&self.momentum(rotation, u))
    }
}
