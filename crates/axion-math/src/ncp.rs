//! NCP functions: the Fischer–Burmeister family and its derivatives.
//!
//! An NCP function $\phi$ turns the complementarity condition
//! $0 \le a \perp b \ge 0$ into the equation $\phi(a, b) = 0$.

/// Value and partial derivatives of an NCP function at one point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NcpEval {
    /// $\phi(a, b)$.
    pub value: f64,
    /// $\partial\phi/\partial a$.
    pub d_a: f64,
    /// $\partial\phi/\partial b$.
    pub d_b: f64,
}

/// The plain Fischer–Burmeister function
/// $$\phi(a, b) = a + b - \sqrt{a^2 + b^2},$$
/// zero exactly when $a \ge 0$, $b \ge 0$ and $ab = 0$.
pub fn fischer_burmeister(a: f64, b: f64) -> f64 {
    fischer_burmeister_scaled(a, b, 1.0, 0.0).value
}

/// The scaled, smoothed Fischer–Burmeister function and its derivatives,
/// $$\phi(a, b) = a + r b - N, \qquad N = \sqrt{a^2 + r^2 b^2 + \varepsilon^2},$$
/// $$\frac{\partial\phi}{\partial a} = 1 - \frac{a}{N}, \qquad
///   \frac{\partial\phi}{\partial b} = r\Big(1 - \frac{r b}{N}\Big).$$
///
/// `r > 0` converts $b$ into the units of $a$ (for a contact $r = h^2 w_n$ turns a force
/// into a displacement); `eps_sq` $= \varepsilon^2 \ge 0$ smooths the corner: the roots
/// of the smoothed function satisfy $a \ge 0$, $b \ge 0$, $a\thinspace r b = \varepsilon^2/2$.
///
/// Where $a + rb > 0$ the value is computed as $(2 a r b - \varepsilon^2)/(a + rb + N)$,
/// which has no cancellation, so a positive $a\thinspace b$ never rounds to a root. At the
/// non-differentiable corner of the plain function ($a = b = 0$, $\varepsilon = 0$) the
/// derivatives returned are the element $(1 - 1/\sqrt2,\ r(1 - 1/\sqrt2))$ of the
/// generalized Jacobian.
pub fn fischer_burmeister_scaled(a: f64, b: f64, r: f64, eps_sq: f64) -> NcpEval {
    let rb = r * b;
    let n = (a * a + rb * rb + eps_sq).sqrt();
    if n == 0.0 {
        let d = 1.0 - std::f64::consts::FRAC_1_SQRT_2;
        return NcpEval {
            value: 0.0,
            d_a: d,
            d_b: r * d,
        };
    }
    let sum = a + rb;
    let value = if sum > 0.0 {
        (2.0 * a * rb - eps_sq) / (sum + n)
    } else {
        sum - n
    };
    NcpEval {
        value,
        d_a: 1.0 - a / n,
        d_b: r * (1.0 - rb / n),
    }
}
