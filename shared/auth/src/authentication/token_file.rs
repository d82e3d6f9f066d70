//! Static bearer tokens from `--token-auth-file`, after upstream's `token/tokenfile`
//! behind `request/bearertoken`.

use std::collections::HashMap;
use std::path::Path;

use futures_util::future::BoxFuture;

use super::{AuthRequest, Authenticator, Response};
use crate::{Error, Result, UserInfo};

/// Upstream's bearer-token error when no token authenticator knows the token.
const INVALID_TOKEN: &str = "invalid bearer token";

/// Upstream's `tokenfile.TokenAuthenticator` wrapped in `bearertoken.Authenticator`.
#[derive(Clone, Debug, Default)]
pub struct TokenFileAuthenticator {
    tokens: HashMap<String, UserInfo>,
}

impl TokenFileAuthenticator {
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let origin = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|source| Error::Io {
            path: origin.clone(),
            source,
        })?;
        Self::from_csv(&String::from_utf8_lossy(&bytes), &origin)
    }

    /// The file format of upstream: `token,user,uid[,"group1,group2"]`, one record a line.
    pub fn from_csv(text: &str, origin: &str) -> Result<Self> {
        let config_err = |message: String| Error::Config {
            what: "token file",
            path: origin.to_owned(),
            message,
        };
        let mut tokens = HashMap::new();
        let mut record_num = 0;
        for record in csv::records(text) {
            let record = record.map_err(config_err)?;
            if record.len() < 3 {
                return Err(config_err(format!(
                    "must have at least 3 columns (token, user name, user uid), found {}",
                    record.len()
                )));
            }
            record_num += 1;
            let mut fields = record.into_iter();
            let (token, name, uid) = (next(&mut fields), next(&mut fields), next(&mut fields));
            if token.is_empty() {
                tracing::warn!(file = origin, record_num, "empty token in token file");
                continue;
            }
            // Go's `strings.Split` of an empty column yields one empty group; kept as is.
            let groups = fields
                .next()
                .map(|g| g.split(',').map(str::to_owned).collect())
                .unwrap_or_default();
            let user = UserInfo {
                name,
                uid,
                groups,
                extra: Default::default(),
            };
            if tokens.insert(token, user).is_some() {
                tracing::warn!(file = origin, record_num, "duplicate token in token file");
            }
        }
        Ok(TokenFileAuthenticator { tokens })
    }

    fn authenticate_sync(&self, req: &AuthRequest<'_>) -> Result<Option<Response>> {
        let Some(token) = super::bearer_token(req) else {
            return Ok(None);
        };
        match self.tokens.get(&token) {
            Some(user) => Ok(Some(Response::bearer(user.clone()))),
            None => Err(Error::InvalidCredentials(INVALID_TOKEN.to_owned())),
        }
    }
}

fn next(fields: &mut impl Iterator<Item = String>) -> String {
    fields.next().unwrap_or_default()
}

impl Authenticator for TokenFileAuthenticator {
    fn authenticate<'a>(
        &'a self,
        req: &'a AuthRequest<'a>,
    ) -> BoxFuture<'a, Result<Option<Response>>> {
        Box::pin(std::future::ready(self.authenticate_sync(req)))
    }
}

/// The part of Go's `encoding/csv` the token file relies on: quoted fields with doubled
/// quotes, fields spanning lines inside quotes, `\r\n` endings, blank lines skipped.
mod csv {
    pub(super) fn records(text: &str) -> Records<'_> {
        Records {
            chars: text.chars().peekable(),
            line: 1,
        }
    }

    pub(super) struct Records<'a> {
        chars: std::iter::Peekable<std::str::Chars<'a>>,
        line: usize,
    }

    impl Records<'_> {
        /// Consumes a line ending (`\n` or `\r\n`) if one is next.
        fn eat_newline(&mut self) -> bool {
            if self.chars.peek() == Some(&'\r') {
                let mut ahead = self.chars.clone();
                ahead.next();
                if ahead.peek() == Some(&'\n') {
                    self.chars.next();
                }
            }
            if self.chars.peek() == Some(&'\n') {
                self.chars.next();
                self.line += 1;
                return true;
            }
            false
        }

        fn quoted_field(&mut self, start_line: usize, field: &mut String) -> Result<(), String> {
            loop {
                match self.chars.next() {
                    None => return Err(self.quote_error(start_line)),
                    Some('"') => {
                        let mut ahead = self.chars.clone();
                        match (ahead.next(), ahead.next()) {
                            (Some('"'), _) => {
                                self.chars.next();
                                field.push('"');
                            }
                            (Some(',') | Some('\n') | None, _) | (Some('\r'), Some('\n')) => {
                                return Ok(());
                            }
                            _ => return Err(self.quote_error(start_line)),
                        }
                    }
                    Some('\r') if self.chars.peek() == Some(&'\n') => {}
                    Some(c) => {
                        if c == '\n' {
                            self.line += 1;
                        }
                        field.push(c);
                    }
                }
            }
        }

        fn quote_error(&self, start_line: usize) -> String {
            let what = "extraneous or missing \" in quoted-field";
            if start_line == self.line {
                format!("parse error on line {}: {what}", self.line)
            } else {
                format!(
                    "record on line {start_line}; parse error on line {}: {what}",
                    self.line
                )
            }
        }

        fn record(&mut self) -> Result<Vec<String>, String> {
            let start_line = self.line;
            let mut record = Vec::new();
            loop {
                let mut field = String::new();
                if self.chars.peek() == Some(&'"') {
                    self.chars.next();
                    self.quoted_field(start_line, &mut field)?;
                } else {
                    while let Some(&c) = self.chars.peek() {
                        if c == ','
                            || c == '\n'
                            || (c == '\r' && self.chars.clone().nth(1) == Some('\n'))
                        {
                            break;
                        }
                        if c == '"' {
                            return Err(format!(
                                "parse error on line {}: bare \" in non-quoted-field",
                                self.line
                            ));
                        }
                        field.push(c);
                        self.chars.next();
                    }
                }
                record.push(field);
                if self.chars.peek() == Some(&',') {
                    self.chars.next();
                    continue;
                }
                self.eat_newline();
                return Ok(record);
            }
        }
    }

    impl Iterator for Records<'_> {
        type Item = Result<Vec<String>, String>;

        fn next(&mut self) -> Option<Self::Item> {
            while self.eat_newline() {}
            self.chars.peek()?;
            Some(self.record())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authentication::testing::request;
    use http::header::AUTHORIZATION;
    use http::{HeaderMap, HeaderValue};

    const FILE: &str = "token1,alice,1001,\"dev,ops\"\n\ntoken2,bob,1002\r\ntoken3,carol,1003,\n";

    fn auth() -> TokenFileAuthenticator {
        TokenFileAuthenticator::from_csv(FILE, "tokens.csv").unwrap()
    }

    fn with_auth(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        h
    }

    async fn run(a: &TokenFileAuthenticator, h: &HeaderMap) -> Result<Option<Response>> {
        a.authenticate(&request("/", h, None)).await
    }

    #[tokio::test]
    async fn known_token_yields_its_user() {
        let resp = run(&auth(), &with_auth("Bearer token1"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(resp.user.name, "alice");
        assert_eq!(resp.user.uid, "1001");
        assert_eq!(resp.user.groups, vec!["dev".to_owned(), "ops".to_owned()]);
        assert_eq!(resp.consumed_headers, vec![AUTHORIZATION]);
    }

    #[tokio::test]
    async fn scheme_is_case_insensitive_and_groups_optional() {
        let resp = run(&auth(), &with_auth("bEaReR token2"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(resp.user.name, "bob");
        assert!(resp.user.groups.is_empty());
    }

    #[tokio::test]
    async fn empty_group_column_is_one_empty_group_like_upstream() {
        let resp = run(&auth(), &with_auth("Bearer token3"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(resp.user.groups, vec![String::new()]);
    }

    #[tokio::test]
    async fn unknown_token_is_an_error() {
        let err = run(&auth(), &with_auth("Bearer nope")).await.unwrap_err();
        assert_eq!(err.to_string(), "invalid bearer token");
    }

    #[tokio::test]
    async fn no_or_other_or_empty_credentials_are_no_opinion() {
        let a = auth();
        assert_eq!(run(&a, &HeaderMap::new()).await.unwrap(), None);
        assert_eq!(
            run(&a, &with_auth("Basic Zm9vOmJhcg==")).await.unwrap(),
            None
        );
        assert_eq!(run(&a, &with_auth("Bearer")).await.unwrap(), None);
        assert_eq!(run(&a, &with_auth("Bearer  token1")).await.unwrap(), None);
    }

    #[tokio::test]
    async fn text_after_the_token_is_ignored() {
        let resp = run(&auth(), &with_auth("Bearer token1 trailing"))
            .await
            .unwrap();
        assert_eq!(resp.unwrap().user.name, "alice");
    }

    #[test]
    fn short_record_is_an_error() {
        let err = TokenFileAuthenticator::from_csv("token,user\n", "f.csv").unwrap_err();
        assert_eq!(
            err.to_string(),
            "token file f.csv: must have at least 3 columns (token, user name, user uid), found 2"
        );
    }

    #[test]
    fn empty_token_is_skipped_and_duplicate_keeps_last() {
        let a = TokenFileAuthenticator::from_csv(",x,1\nt,first,1\nt,second,2\n", "f").unwrap();
        assert_eq!(a.tokens.len(), 1);
        assert_eq!(a.tokens["t"].name, "second");
    }

    #[test]
    fn csv_quoting_follows_go() {
        let recs: Vec<_> = csv::records("a,\"b \"\"q\"\"\",\"multi\nline\"\n")
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(recs, vec![vec!["a", "b \"q\"", "multi\nline"]]);
        let bare = csv::records("a\"b,c,d\n").next().unwrap().unwrap_err();
        assert!(bare.contains("bare \""), "{bare}");
        let open = csv::records("\"abc,d\n").next().unwrap().unwrap_err();
        assert!(open.contains("extraneous or missing"), "{open}");
    }

    #[test]
    fn missing_file_is_an_io_error() {
        let err = TokenFileAuthenticator::from_file("/nonexistent/tokens.csv").unwrap_err();
        assert!(matches!(err, Error::Io { .. }));
    }
}
