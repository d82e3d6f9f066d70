//! The structured configuration's validation and decoding, with upstream's messages and
//! field paths (validation_test.go).

use serde_json::json;

use super::super::*;
use super::*;

fn validate_one(a: &JwtAuthenticator) -> String {
    let (_, errs) = compile_and_validate_jwt_authenticator(a, &["https://sa".to_owned()]);
    kas_apimachinery::validation::field::aggregate_message(&errs).unwrap_or_default()
}

#[test]
fn validates_issuer_urls() {
    let with_url = |url: &str| {
        let mut a = jwt(default_mappings());
        a.issuer.url = url.to_owned();
        validate_one(&a)
    };
    assert_eq!(with_url(""), "issuer.url: Required value: URL is required");
    assert_eq!(
        with_url("https://issuer-url:invalid-port"),
        r#"issuer.url: Invalid value: "https://issuer-url:invalid-port": parse "https://issuer-url:invalid-port": invalid port ":invalid-port" after host"#
    );
    assert_eq!(
        with_url("http://issuer-url"),
        r#"issuer.url: Invalid value: "http://issuer-url": URL scheme must be https"#
    );
    assert_eq!(
        with_url("https://user:pass@issuer-url"),
        r#"issuer.url: Invalid value: "https://user:pass@issuer-url": URL must not contain a username or password"#
    );
    assert_eq!(
        with_url("https://issuer-url?query"),
        r#"issuer.url: Invalid value: "https://issuer-url?query": URL must not contain a query"#
    );
    assert_eq!(
        with_url("https://issuer-url#fragment"),
        r#"issuer.url: Invalid value: "https://issuer-url#fragment": URL must not contain a fragment"#
    );
    assert_eq!(
        with_url("https://sa"),
        r#"issuer.url: Invalid value: "https://sa": URL must not overlap with disallowed issuers: [https://sa]"#
    );
    let mut a = jwt(default_mappings());
    a.issuer.discovery_url = "https://auth.example.com///".to_owned();
    assert_eq!(
        validate_one(&a),
        r#"issuer.discoveryURL: Invalid value: "https://auth.example.com///": discoveryURL must be different from URL"#
    );
}

#[test]
fn validates_audiences_and_ca() {
    let with = |aud: &[&str], policy: &str| {
        let mut a = jwt(default_mappings());
        a.issuer.audiences = aud.iter().map(|s| (*s).to_owned()).collect();
        a.issuer.audience_match_policy = policy.to_owned();
        validate_one(&a)
    };
    assert_eq!(
        with(&[], ""),
        "issuer.audiences: Required value: at least one issuer.audiences is required"
    );
    assert_eq!(
        with(&[""], ""),
        "issuer.audiences[0]: Required value: audience can't be empty"
    );
    assert_eq!(
        with(&["audience"], "MatchExact"),
        r#"issuer.audienceMatchPolicy: Invalid value: "MatchExact": audienceMatchPolicy must be empty or MatchAny for single audience"#
    );
    assert_eq!(
        with(&["audience", "audience"], "MatchAny"),
        r#"issuer.audiences[1]: Duplicate value: "audience""#
    );
    assert_eq!(
        with(&["audience1", "audience2"], ""),
        r#"issuer.audienceMatchPolicy: Invalid value: "": audienceMatchPolicy must be MatchAny for multiple audiences"#
    );
    assert_eq!(with(&["audience1", "audience2"], "MatchAny"), "");
    let mut a = jwt(default_mappings());
    a.issuer.certificate_authority = "bogus".to_owned();
    assert_eq!(
        validate_one(&a),
        r#"issuer.certificateAuthority: Invalid value: "<omitted>": data does not contain any valid RSA or ECDSA certificates"#
    );
}

#[test]
fn validates_claim_rules_and_mappings() {
    let rules = |rules: Vec<ClaimValidationRule>| {
        let mut a = jwt(default_mappings());
        a.claim_validation_rules = rules;
        validate_one(&a)
    };
    let rule = |claim: &str, value: &str, expr: &str, msg: &str| ClaimValidationRule {
        claim: claim.to_owned(),
        required_value: value.to_owned(),
        expression: expr.to_owned(),
        message: msg.to_owned(),
    };
    assert_eq!(
        rules(vec![rule("", "", "", "")]),
        "claimValidationRules[0]: Required value: claim or expression is required"
    );
    assert_eq!(
        rules(vec![rule("claim", "", "claims.foo == 'bar'", "")]),
        r#"claimValidationRules[0]: Invalid value: "claim": claim and expression can't both be set"#
    );
    assert_eq!(
        rules(vec![rule("claim", "value", "", "message")]),
        r#"claimValidationRules[0].message: Invalid value: "message": message can't be set when claim is set"#
    );
    assert_eq!(
        rules(vec![rule("", "value", "claims.foo == 'bar'", "")]),
        r#"claimValidationRules[0].requiredValue: Invalid value: "value": requiredValue can't be set when expression is set"#
    );
    assert_eq!(
        rules(vec![rule("claim", "", "", ""), rule("claim", "", "", "")]),
        r#"claimValidationRules[1].claim: Duplicate value: "claim""#
    );
    assert_eq!(
        rules(vec![rule("", "", "foo.bar", "")]),
        "claimValidationRules[0].expression: Invalid value: \"foo.bar\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')\n | foo.bar\n | ^"
    );
    assert_eq!(
        rules(vec![rule("", "", "claims.foo", "")]),
        r#"claimValidationRules[0].expression: Invalid value: "claims.foo": must evaluate to bool"#
    );
    assert_eq!(
        rules(vec![rule("", "", "claims.groups.all(g, g != 'x')", "")]),
        ""
    );

    let mappings = |m: ClaimMappings| validate_one(&jwt(m));
    let expr = |e: &str| PrefixedClaimOrExpression {
        expression: e.to_owned(),
        ..PrefixedClaimOrExpression::default()
    };
    assert_eq!(
        mappings(ClaimMappings::default()),
        "claimMappings.username: Required value: claim or expression is required"
    );
    assert_eq!(
        mappings(ClaimMappings {
            username: PrefixedClaimOrExpression {
                claim: "sub".to_owned(),
                ..PrefixedClaimOrExpression::default()
            },
            ..ClaimMappings::default()
        }),
        "claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing"
    );
    assert_eq!(
        mappings(ClaimMappings {
            username: PrefixedClaimOrExpression {
                prefix: Some("prefix".to_owned()),
                ..expr("claims.sub")
            },
            ..ClaimMappings::default()
        }),
        r#"claimMappings.username.prefix: Invalid value: "prefix": prefix can't be set when expression is set"#
    );
    for e in [
        "claims.email",
        "claims.?email",
        "[\"a\"].map(i, i + claims.email)",
    ] {
        assert_eq!(
            mappings(ClaimMappings {
                username: expr(e),
                ..ClaimMappings::default()
            }),
            format!(
                "claimMappings.username.expression: Invalid value: {}: claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression",
                kas_apimachinery::golang::strconv::quote(e)
            )
        );
    }
    assert_eq!(
        mappings(ClaimMappings {
            username: expr("claims.email_verified ? claims.email : claims.sub"),
            ..ClaimMappings::default()
        }),
        ""
    );
    let extra = |key: &str, value: &str| ClaimMappings {
        username: prefixed("sub", ""),
        extra: vec![ExtraMapping {
            key: key.to_owned(),
            value_expression: value.to_owned(),
        }],
        ..ClaimMappings::default()
    };
    assert_eq!(
        mappings(extra("", "claims.x")),
        "claimMappings.extra[0].key: Required value"
    );
    assert_eq!(
        mappings(extra("example.org/Foo", "claims.x")),
        r#"claimMappings.extra[0].key: Invalid value: "example.org/Foo": key must be lowercase"#
    );
    assert_eq!(
        mappings(extra("k8s.io/foo", "claims.x")),
        r#"claimMappings.extra[0].key: Invalid value: "k8s.io/foo": k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use"#
    );
    assert_eq!(
        mappings(extra("example.org/foo", "")),
        "claimMappings.extra[0].valueExpression: Required value: valueExpression is required"
    );
    assert_eq!(
        mappings(extra("foo", "claims.x")),
        r#"claimMappings.extra[0].key: Invalid value: "foo": must be a domain-prefixed path (such as "acme.io/foo")"#
    );
}

#[test]
fn validates_configuration() {
    let mut c = AuthenticationConfiguration {
        jwt: vec![jwt(default_mappings()), jwt(default_mappings())],
        anonymous: Some(AnonymousAuthConfig {
            enabled: false,
            conditions: vec![AnonymousAuthCondition {
                path: "/healthz".to_owned(),
            }],
        }),
        ..AuthenticationConfiguration::default()
    };
    let msg = |c: &AuthenticationConfiguration| {
        kas_apimachinery::validation::field::aggregate_message(
            &validate_authentication_configuration(c, &[]),
        )
        .unwrap_or_default()
    };
    assert_eq!(
        msg(&c),
        r#"[jwt[1].issuer.url: Duplicate value: "https://auth.example.com", anonymous.conditions: Invalid value: [{Path:/healthz}]: enabled should be set to true when conditions are defined]"#
    );
    c.jwt = vec![jwt(default_mappings()); 65];
    c.anonymous = None;
    assert_eq!(msg(&c), "jwt: Too many: 65: must have at most 64 items");
    let mut bad = jwt(default_mappings());
    bad.user_validation_rules = vec![
        UserValidationRule {
            expression: "user.username.startsWith('system:')".to_owned(),
            message: String::new(),
        };
        2
    ];
    c.jwt = vec![bad];
    assert_eq!(
        msg(&c),
        r#"jwt[0].userValidationRules[1].expression: Duplicate value: "user.username.startsWith('system:')""#
    );
}

#[test]
fn decodes_configuration_strictly() {
    let ok = AuthenticationConfiguration::decode(json!({
        "apiVersion": "apiserver.config.k8s.io/v1beta1",
        "kind": "AuthenticationConfiguration",
        "jwt": [{"issuer": {"url": ISSUER, "audiences": ["a"]},
                 "claimMappings": {"username": {"claim": "sub", "prefix": ""}}}],
    }))
    .unwrap();
    assert_eq!(
        ok.jwt[0].claim_mappings.username.prefix.as_deref(),
        Some("")
    );
    let alpha = AuthenticationConfiguration::decode(json!({
        "apiVersion": "apiserver.config.k8s.io/v1alpha1",
        "kind": "AuthenticationConfiguration",
    }));
    assert!(alpha.is_ok());
    let err = AuthenticationConfiguration::decode(json!({
        "apiVersion": "apiserver.config.k8s.io/v1",
        "kind": "AuthenticationConfiguration",
    }))
    .unwrap_err();
    assert!(err.starts_with(r#"no kind "AuthenticationConfiguration" is registered for version "apiserver.config.k8s.io/v1""#), "{err}");
    let err = AuthenticationConfiguration::decode(json!({
        "apiVersion": "apiserver.config.k8s.io/v1beta1",
        "kind": "AuthenticationConfiguration",
        "jwt": [{"issuer": {"uri": ISSUER}}],
    }))
    .unwrap_err();
    assert!(
        err.starts_with("strict decoding error: unknown field `uri`"),
        "{err}"
    );
}

// ---- authentication (upstream's oidc_test.go) ----
