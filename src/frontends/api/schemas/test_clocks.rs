//! Test clocks: what creating and advancing one accept.

use super::*;

/// A new test clock, frozen at `frozen_time`.
#[derive(ToSchema)]
#[schema(example = json!({"frozen_time": "2026-11-22T10:15:30Z", "name": "Renewals"}))]
pub struct TestClockCreate {
    /// The clock's time.
    frozen_time: TimeInput,
    /// A name for the merchant.
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    name: Option<String>,
}

/// Moving a test clock forward; everything that falls due on the way runs, in order, before
/// the answer. 409 while the clock is already advancing.
#[derive(ToSchema)]
#[schema(example = json!({"frozen_time": "2026-12-22T10:15:30Z"}))]
pub struct TestClockAdvance {
    /// The new time: the clock's own time does nothing; an earlier one is 409.
    frozen_time: TimeInput,
}
