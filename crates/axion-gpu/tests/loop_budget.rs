//! lavapipe (Mesa's llvmpipe) counts the passes of all loops of one kernel invocation
//! against one budget of 65535 and, once it is spent, runs every later loop for one
//! pass: every kernel checks for this, and a step it hit is an error, never a result.

mod common;

use axion::scenes;
use axion_gpu::{GpuError, GpuSettings};
use axion_model::{Control, State};

/// Ten 10-box pyramids in one world (5050 contact pairs, 120 000 rows): `step_begin`'s
/// contact detection alone needs far more loop passes than lavapipe allows, so there
/// the step is `GpuError::LoopBudget`, naming the world, until the next upload; a
/// hardware adapter steps it.
#[test]
fn a_step_beyond_lavapipes_loop_budget_is_an_error() {
    let model = scenes::pyramid(10).unwrap();
    let Some(mut gpu) = common::backend(&model, 1, GpuSettings::default()) else {
        return;
    };
    let state = State::new(&model, 1).unwrap();
    gpu.upload(&model, &state).unwrap();
    gpu.advance(&Control::new(&model, 1), 0.01, 1).unwrap();
    let report = gpu.last_report();
    if gpu.adapter().name.contains("llvmpipe") {
        match report {
            Err(GpuError::LoopBudget {
                worlds,
                first,
                rows,
                ..
            }) => {
                assert_eq!((worlds, first), (1, 0));
                // 4950 box pairs × 8 slots × 3 rows + 100 box–ground pairs × 4 × 3.
                assert_eq!(rows, 4950 * 8 * 3 + 100 * 4 * 3);
            }
            other => panic!("expected a loop-budget error on lavapipe, got {other:?}"),
        }
        // An upload starts from a state of its own and clears the mark.
        gpu.upload(&model, &state).unwrap();
        assert!(gpu.last_report().is_ok());
    } else {
        assert!(report.is_ok(), "{report:?}");
    }
}
