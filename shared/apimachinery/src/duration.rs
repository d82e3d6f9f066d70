//! Upstream's `k8s.io/apimachinery/pkg/util/duration`: the ages `kubectl get` shows
//! (`5m`, `3h1m`, `2y1d`), which Table rows carry as upstream's printers write them.

/// Upstream's `duration.HumanDuration`, on whole seconds: precise while small, coarser
/// as it grows; a clock up to a second ahead still reads `0s`.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".to_owned();
    }
    if seconds < 0 {
        return "0s".to_owned();
    }
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_durations_match_upstream() {
        for (secs, want) in [
            (-2, "<invalid>"),
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (125, "2m5s"),
            (600, "10m"),
            (3 * 3600, "3h"),
            (3 * 3600 + 60, "3h1m"),
            (8 * 3600, "8h"),
            (48 * 3600, "2d"),
            (49 * 3600, "2d1h"),
            (8 * 86_400, "8d"),
            (2 * 365 * 86_400, "2y"),
            (2 * 365 * 86_400 + 86_400, "2y1d"),
            (9 * 365 * 86_400, "9y"),
        ] {
            assert_eq!(human_duration(secs), want, "{secs}");
        }
    }
}
