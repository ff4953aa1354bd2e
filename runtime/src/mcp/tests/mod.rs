mod support;

mod approval_tests;
mod config_tests;
mod faults;
mod hook_tests;
mod naming_tests;
mod oracle;
mod output_tests;
mod servers;
