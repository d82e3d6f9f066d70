//! The batch/v1 workloads, after upstream's `pkg/registry/batch` and
//! `pkg/apis/batch/validation`: Jobs and CronJobs over the shared pod template
//! (`crate::podspec`).

mod cron;
pub mod cronjobs;
pub mod jobs;
