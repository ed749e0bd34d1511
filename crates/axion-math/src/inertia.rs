//! Mass properties, world inertia and the block-diagonal mass matrix $\tilde M$.

use nalgebra::{Matrix3, SymmetricEigen, UnitQuaternion, Vector3};

use crate::error::{MathError, ensure_all_finite, ensure_finite};
use crate::pose::{Twist, Wrench, angular, linear, twist};

/// Relative tolerance of the symmetry and triangle-inequality checks on inertia tensors.
const INERTIA_TOLERANCE: f64 = 1e-9;

/// Mass $m$ and body-frame inertia $I_b$ about the centre of mass, with their inverses.
///
/// A static (or kinematic) body has infinite mass: both inverses are zero, see
/// [`MassProperties::infinite`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MassProperties {
    mass: f64,
    inertia: Matrix3<f64>,
    inv_mass: f64,
    inv_inertia: Matrix3<f64>,
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
        let mut m: Vec<f64> = SymmetricEigen::new(sym)
            .eigenvalues
            .iter()
            .copied()
            .collect();
        m.sort_by(f64::total_cmp);
        let moments = [m[0], m[1], m[2]];
        if moments[0] <= 0.0 {
            return Err(MathError::NonPositiveInertia { moments });
        }
        if moments[2] > (moments[0] + moments[1]) * (1.0 + INERTIA_TOLERANCE) {
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
        })
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
        }
    }

    /// Mass in kg (infinite for a static body).
    pub fn mass(&self) -> f64 {
        self.mass
    }
    /// Inverse mass (zero for a static body).
    pub fn inv_mass(&self) -> f64 {
        self.inv_mass
    }
    /// Body-frame inertia about the COM.
    pub fn inertia(&self) -> &Matrix3<f64> {
        &self.inertia
    }
    /// Body-frame inverse inertia (zero for a static body).
    pub fn inv_inertia(&self) -> &Matrix3<f64> {
        &self.inv_inertia
    }

    /// World inertia $I_w = R(\theta)\thinspace  I_b\thinspace  R(\theta)^\top$.
    pub fn world_inertia(&self, rotation: &UnitQuaternion<f64>) -> Matrix3<f64> {
        let r = rotation.to_rotation_matrix();
        r.matrix() * self.inertia * r.matrix().transpose()
    }

    /// World inverse inertia $I_w^{-1} = R(\theta)\thinspace  I_b^{-1}\thinspace  R(\theta)^\top$.
    pub fn world_inv_inertia(&self, rotation: &UnitQuaternion<f64>) -> Matrix3<f64> {
        let r = rotation.to_rotation_matrix();
        r.matrix() * self.inv_inertia * r.matrix().transpose()
    }

    /// Momentum $\tilde M(\theta)\thinspace u = (m v,\ I_w \omega)$.
    pub fn momentum(&self, rotation: &UnitQuaternion<f64>, u: &Twist) -> Wrench {
        twist(
            linear(u) * self.mass,
            self.world_inertia(rotation) * angular(u),
        )
    }

    /// Velocity change $\tilde M(\theta)^{-1} f = (f_{lin}/m,\ I_w^{-1} \tau)$.
    pub fn inverse_apply(&self, rotation: &UnitQuaternion<f64>, f: &Wrench) -> Twist {
        twist(
            linear(f) * self.inv_mass,
            self.world_inv_inertia(rotation) * angular(f),
        )
    }

    /// Kinetic energy $\tfrac12 u^\top \tilde M u$.
    pub fn kinetic_energy(&self, rotation: &UnitQuaternion<f64>, u: &Twist) -> f64 {
        0.5 * u.dot(&self.momentum(rotation, u))
    }
}
