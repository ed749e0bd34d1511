//! Many contacts on the same few bodies: spheres placed overlapping at one spot, so
//! that every sphere touches every other. Each contact is then coupled, through its
//! two bodies, to every contact of those bodies; a sparse LU of the unreduced Newton
//! system fills in to a dense matrix of the contacts' rows (100 spheres: 2.2 GB and
//! minutes per step). The solver reduces the system to the bodies' velocities
//! (`axion-cpu`'s `reduced` module), whose size does not grow with the contacts.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use axion::{BackendChoice, BodyId, Simulator, SolverSettings, parse_scene};
use nalgebra::Vector3;

/// The system allocator, counting the bytes in use and their peak.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = IN_USE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// `n` spheres of radius 0.1 m and 1 kg with centres scattered over a 2 cm cube
/// (a fixed linear congruential sequence), no gravity, no ground: every pair overlaps.
fn pile(n: usize) -> String {
    let mut seed: u64 = 1;
    let mut next = || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 11) as f64 / (1u64 << 53) as f64 * 0.02 - 0.01
    };
    let mut scene = String::from("[simulation]\ngravity = [0, 0, 0]\n");
    for i in 0..n {
        let (x, y, z) = (next(), next(), next());
        scene += &format!(
            "[[bodies]]\nname = \"s{i}\"\nposition = [{x}, {y}, {z}]\nmass = 1.0\n\
             inertia = [0.004, 0.004, 0.004]\n\
             shapes = [{{ type = \"sphere\", radius = 0.1 }}]\n"
        );
    }
    scene
}

/// Steps a pile of `n` spheres twice, each step solved once (no second attempt from
/// zero forces or with more creep, no split; without persistence the second step also
/// starts from zero contact forces); returns the simulator and the peak heap in use
/// while it stepped (bytes).
///
/// A step that does not converge is solved again, and a split holds up to
/// `split_depth` + 2 attempts' results and factors at once: linear in the contacts too,
/// but which steps are solved again, and how deep they split, follows each pile's path
/// (neither pile converges), so the piles would not compare like with like (with the
/// default settings the 60-sphere pile peaked at 51 MB, the 30-sphere one at 10–15 MB
/// as its path changed).
fn step_pile(n: usize) -> (Simulator, usize) {
    let model = parse_scene(&pile(n)).expect("a valid scene").model;
    let once = SolverSettings {
        split_depth: 0,
        fallback_creep: 0.0,
        contact_persistence: false,
        ..SolverSettings::default()
    };
    let mut sim =
        Simulator::new(model, 1, 0.01, BackendChoice::CpuWith(once)).expect("a simulator");
    let before = IN_USE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let summary = sim.run(2).expect("finite steps");
    assert_eq!(summary.steps, 2);
    let contacts = sim.contacts(0).expect("the last step's contacts").len();
    assert_eq!(contacts, n * (n - 1) / 2, "every pair touches");
    (sim, PEAK.load(Ordering::Relaxed) - before)
}

/// Piles of 30 and 60 spheres (435 and 1770 contacts): the heap the larger pile needs
/// while it steps grows at most in proportion to its contacts (measured: 10.1 MB and
/// 23.6 MB, 2.3× for 4.1× the contacts; the unreduced LU grew with the square of its
/// rows: 19 MB and 157 MB resident for 20 and 40 spheres). Only internal forces act, so
/// the total momentum stays zero (1e-9 N·s), and every velocity is finite.
#[test]
fn a_pile_of_overlapping_spheres_steps_in_memory_linear_in_its_contacts() {
    let (small, large) = (30, 60);
    let (_, small_bytes) = step_pile(small);
    let (sim, large_bytes) = step_pile(large);
    let contacts = |n: usize| (n * (n - 1) / 2) as f64;
    assert!(
        large_bytes as f64 <= small_bytes as f64 * contacts(large) / contacts(small),
        "peak heap {small_bytes} bytes for {small} spheres, {large_bytes} for {large}"
    );
    let mut momentum = Vector3::zeros();
    for b in 0..large {
        let v = sim.state().velocity(0, BodyId(b));
        assert!(v.iter().all(|x| x.is_finite()), "sphere {b}: {v}");
        momentum += v.fixed_rows::<3>(0);
    }
    assert!(momentum.norm() < 1e-9, "total momentum {momentum}");
}
