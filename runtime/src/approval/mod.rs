//! Approvals: the approval policy, typed approval requests and decisions, the `Approver` trait
//! (terminal, hook command, fixed policy), and the session cache of "approved for session".

mod policy;

pub use policy::{AskForApproval, GranularApproval};
