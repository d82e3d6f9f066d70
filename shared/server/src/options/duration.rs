//! Go `time.Duration` flag values ("60s", "1m0s", "500ms"), as upstream's flags take them,
//! parsed by `time.ParseDuration` with its error texts.

use std::str::FromStr;
use std::time::Duration;

use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::golang::time::parse_duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GoDuration(pub Duration);

impl FromStr for GoDuration {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let d = parse_duration(s).map_err(|e| e.to_string())?;
        d.to_std()
            .map(GoDuration)
            .ok_or_else(|| format!("negative duration {} is not allowed", quote(s)))
    }
}
