//! The one error enum of kas-auth.

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Credentials were presented but are not valid; the request gets 401.
    #[error("{0}")]
    InvalidCredentials(String),
    /// A configuration file could not be read or parsed.
    #[error("{what} {path}: {message}")]
    Config {
        what: &'static str,
        path: String,
        message: String,
    },
    #[error("reading {path}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// What an authenticator had to read could not be read (storage).
    #[error("{0}")]
    Storage(String),
    /// A webhook authorizer's call failed, or its answer cannot be used.
    #[error("{0}")]
    Webhook(String),
    /// An authorizer failed and its failure policy denies (a webhook's `failurePolicy:
    /// Deny`): upstream's Deny decision with an error. A union stops there; the filter
    /// answers 500 with the message, as upstream checks the error before the decision.
    #[error(transparent)]
    DeniedOnError(Box<Error>),
    /// An authenticator's error with what it noted before it failed (upstream's audit
    /// annotations made before the error: an invalidated legacy token's), which the
    /// failed request's audit event keeps.
    #[error("{0}")]
    Noted(Box<Error>, crate::authentication::Notes),
    /// Several authenticators or authorizers failed; upstream's `utilerrors.Aggregate`.
    /// From an authenticator this still means 401, from an authorizer 500.
    #[error("{}", aggregate_message(.0))]
    Aggregate(Vec<Error>),
}

impl Error {
    /// Upstream's `utilerrors.NewAggregate`: nothing for no errors, the error itself for one.
    pub(crate) fn aggregate(mut errs: Vec<Error>) -> Option<Error> {
        match errs.len() {
            0 => None,
            1 => errs.pop(),
            _ => Some(Error::Aggregate(errs)),
        }
    }
}

impl Error {
    /// `self` with `notes`, unless there are none.
    pub fn noted(self, notes: crate::authentication::Notes) -> Error {
        if notes.is_empty() {
            self
        } else {
            Error::Noted(Box::new(self), notes)
        }
    }

    /// The notes an error (or the errors it aggregates) carries, in order.
    pub fn notes(&self) -> Vec<&crate::authentication::Notes> {
        match self {
            Error::Noted(inner, notes) => {
                let mut all = vec![notes];
                all.extend(inner.notes());
                all
            }
            Error::Aggregate(errs) => errs.iter().flat_map(Error::notes).collect(),
            Error::DeniedOnError(inner) => inner.notes(),
            _ => Vec::new(),
        }
    }
}

/// Upstream's aggregate message: distinct messages in order, bracketed when more than one.
fn aggregate_message(errs: &[Error]) -> String {
    let mut seen: Vec<String> = Vec::new();
    collect_messages(errs, &mut seen);
    match seen.len() {
        0 => String::new(),
        1 => seen.remove(0),
        _ => format!("[{}]", seen.join(", ")),
    }
}

/// Nested aggregates are flattened, as upstream's `visit` does.
fn collect_messages(errs: &[Error], seen: &mut Vec<String>) {
    for err in errs {
        if let Error::Aggregate(inner) = err {
            collect_messages(inner, seen);
            continue;
        }
        let msg = err.to_string();
        if !seen.contains(&msg) {
            seen.push(msg);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregate_of_nothing_is_none() {
        assert!(Error::aggregate(Vec::new()).is_none());
    }

    #[test]
    fn aggregate_of_one_is_that_error() {
        let err = Error::aggregate(vec![Error::InvalidCredentials("bad".into())]).unwrap();
        assert!(matches!(err, Error::InvalidCredentials(ref m) if m == "bad"));
    }

    #[test]
    fn aggregate_message_dedupes_and_brackets() {
        let err = Error::aggregate(vec![
            Error::InvalidCredentials("a".into()),
            Error::InvalidCredentials("b".into()),
            Error::InvalidCredentials("a".into()),
        ])
        .unwrap();
        assert_eq!(err.to_string(), "[a, b]");
        let same = Error::aggregate(vec![
            Error::InvalidCredentials("a".into()),
            Error::InvalidCredentials("a".into()),
        ])
        .unwrap();
        assert_eq!(same.to_string(), "a");
    }
}
