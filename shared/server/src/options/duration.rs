//! Go `time.Duration` flag values ("60s", "1m0s", "500ms"), as upstream's flags take them.

use std::str::FromStr;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GoDuration(pub Duration);

impl FromStr for GoDuration {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        kas_filters::duration::parse_go_duration(s)
            .map(GoDuration)
            .ok_or_else(|| format!("invalid duration {s:?}"))
    }
}
