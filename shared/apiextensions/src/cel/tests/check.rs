//! The type checker (`check/`): a corpus of valid rules that must compile (from upstream's
//! `compilation_test.go`, `validation_test.go` and the libraries' documentation), and
//! invalid ones with cel-go's messages.

use kas_apimachinery::validation::field::Path;
use serde_json::{Value as Json, json};

use crate::cel::compile_errors;

/// A string of bounded size (keeps the cost estimates of the corpus under the limits).
fn string() -> Json {
    json!({ "type": "string", "maxLength": 10 })
}

fn list(items: Json) -> Json {
    json!({ "type": "array", "maxItems": 10, "items": items })
}

fn map(values: Json) -> Json {
    json!({ "type": "object", "maxProperties": 10, "additionalProperties": values })
}

/// The node the rules are on: every kind of value `SchemaDeclType` types.
fn node() -> Json {
    json!({ "type": "object", "properties": {
        "i": { "type": "integer" },
        "n": { "type": "number" },
        "s": string(),
        "b": { "type": "boolean" },
        "by": { "type": "string", "format": "byte", "maxLength": 10 },
        "d": { "type": "string", "format": "duration" },
        "t": { "type": "string", "format": "date-time" },
        "dt": { "type": "string", "format": "date" },
        "ios": { "x-kubernetes-int-or-string": true },
        "l": list(string()),
        "li": list(json!({ "type": "integer" })),
        "set": { "type": "array", "maxItems": 10, "items": string(), "x-kubernetes-list-type": "set" },
        "lo": list(json!({ "type": "object", "properties": {
            "name": string(), "v": { "type": "integer" },
        } })),
        "m": map(string()),
        "mi": map(json!({ "type": "integer" })),
        "mo": map(json!({ "type": "object", "properties": { "x": { "type": "integer" } } })),
        "o": { "type": "object", "properties": {
            "i": { "type": "integer" },
            "s": string(),
            "o": { "type": "object", "properties": { "i": { "type": "integer" } } },
        } },
        "pu": { "type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {
            "known": { "type": "integer" },
        } },
        "e": { "type": "object", "x-kubernetes-embedded-resource": true,
            "x-kubernetes-preserve-unknown-fields": true },
        "foo-bar": string(),
        "if": { "type": "integer" },
    } })
}

/// The errors of compiling `rules` on `node`, a property of the custom resource's root.
fn compile_on(node: Json, rules: Json) -> Vec<String> {
    let mut node = node;
    node["x-kubernetes-validations"] = rules;
    let schema = json!({ "type": "object", "properties": { "v": node } });
    let path = Path::new("spec")
        .child("versions")
        .index(0)
        .child("schema")
        .child("openAPIV3Schema");
    compile_errors(&schema, &path)
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn compile(rule: &str) -> Vec<String> {
    compile_on(node(), json!([{ "rule": rule }]))
}

/// Asserts that `rule` fails with exactly one error, which ends with `want`.
fn assert_error(rule: &str, want: &str) {
    let errs = compile(rule);
    assert!(
        errs.len() == 1 && errs[0].ends_with(want),
        "{rule}: {errs:#?}\nwant: {want}"
    );
}

#[rustfmt::skip]
const VALID: &[&str] = &[
    // arithmetic and comparisons, with cel-go's cross-type numeric orderings
    "self.i + 1 > 0", "self.n * 2.0 < 10.0", "double(self.i) < self.n", "self.i < self.n",
    "self.i == int(self.n)", "self.i > 1u", "uint(self.i) == 1u", "self.i % 2 == 0",
    "self.i / 2 <= self.i", "-self.i < 0", "-self.n < 0.0", "self.n >= self.i",
    "1u + 2u == 3u", "self.i != 0 && self.n != 0.0", "self.if == 10", "self.__if__ == 10",
    "self.foo__dash__bar == 'x'",
    // strings, strings v2, regex
    "self.s.startsWith('a')", "self.s.endsWith('a')", "self.s.contains('a')",
    "self.s.matches('^[a-z]+$')", "matches(self.s, '^a')", "size(self.s) < 10",
    "self.s.size() < 10", "self.s + 'x' != ''", "self.s < 'b'", "self.s.lowerAscii() == self.s",
    "self.s.upperAscii() != ''", "self.s.charAt(0) == 'a'", "self.s.indexOf('a') >= 0",
    "self.s.lastIndexOf('a', 3) >= -1", "self.s.replace('a', 'b') != ''",
    "self.s.replace('a', 'b', 1) != ''", "self.s.split(',').size() > 0",
    "self.s.split(',', 2)[0] == ''", "self.s.substring(1) != ''", "self.s.substring(1, 2) != ''",
    "self.s.trim() == self.s", "self.l.join(',') != ''", "self.l.join() != ''",
    "'%s-%d'.format([self.s, self.i]) != ''", "strings.quote(self.s) != ''",
    "self.s.find('[0-9]+') == ''", "self.s.findAll('x').size() == 0",
    "self.s.findAll('x', 1).size() == 0",
    // bytes
    "string(self.by).endsWith('s')", "size(self.by) > 0", "self.by == b'abc'",
    "bytes(self.s) == self.by", "self.by + b'a' != b''", "self.by < b'z'",
    // durations and timestamps
    "self.d > duration('1s')", "self.d.getHours() < 2", "self.d.getMilliseconds() >= 0",
    "self.t < timestamp('2023-01-01T00:00:00Z')", "self.t.getFullYear() > 2000",
    "self.t + self.d > self.t", "self.d + self.t > self.t", "self.t - self.d < self.t",
    "self.t - self.t == duration('0s')", "self.d + self.d == duration('2h')",
    "self.dt.getDayOfWeek() >= 0", "self.t.getHours('America/Los_Angeles') >= 0",
    "self.t.getDate() > 0 && self.t.getDayOfMonth() >= 0 && self.t.getMonth() >= 0",
    "self.t.getDayOfYear() >= 0 && self.t.getMinutes() >= 0 && self.t.getSeconds() >= 0",
    "type(self.d) == google.protobuf.Duration", "type(self.t) == google.protobuf.Timestamp",
    "int(self.t) > 0", "string(self.d) != ''", "duration(string(self.d)) == self.d",
    "timestamp(string(self.t)) == self.t", "timestamp(0) < self.t", "int(self.d) > 0",
    "self.t != null", "self.d != null",
    // int-or-string: dyn matches every overload
    "self.ios == 1 || self.ios == 'a'", "type(self.ios) == string ? self.ios.startsWith('a') : self.ios > 0",
    "int(self.ios) > 0", "self.ios.x == 1", "self.ios[0] == 1", "self.ios + 1 > 0",
    "size(self.ios) > 0", "dyn(self.i) == 'a'", "dyn(self.s) == 1",
    "self.ios == null",
    // lists
    "self.l.all(x, x != '')", "self.l.exists(x, x == 'a')", "self.l.exists_one(x, x == 'a')",
    "self.l.map(x, x + 'a').size() == size(self.l)", "self.l.filter(x, x != '').size() >= 0",
    "self.li.map(x, x * 2).sum() > 0", "self.li.sum() > 0", "self.li.min() <= self.li.max()",
    "self.li.isSorted()", "self.l.isSorted()", "self.l.indexOf('a') >= -1",
    "self.l.lastIndexOf('a') >= -1", "'a' in self.l", "self.l[0] == 'a'",
    "self.l + ['a'] != []", "size(self.l) == 0 || self.l[0] != ''",
    "self.lo.all(o, o.name != '' && o.v > 0)", "self.lo.exists(o, has(o.name))",
    "self.lo[0].name == 'x'", "self.lo.map(o, o.v).sum() >= 0", "self.lo[0] == self.lo[1]",
    "self.lo.map(o, o.name).all(n, n.startsWith('a'))",
    "self.l.map(x, x.size() > 0, x).size() >= 0", "self.set.all(x, x in self.l)",
    "sets.contains(self.l, ['a'])", "sets.equivalent(self.l, self.set)",
    "sets.intersects(self.li, [1, 2])", "self.l == self.set",
    "self.l.map(x, x.size()).all(n, n > 0)", "self.l.filter(x, x != '')[0] == 'a'",
    "self.li.map(x, x > 0)[0]",
    // two-variable comprehensions
    "self.l.all(i, x, i >= 0 && x != '')", "self.m.all(k, v, k != v)",
    "self.li.exists(i, v, i == v)", "self.li.existsOne(i, v, v == 1)",
    "self.li.transformList(i, v, v * 2).size() == size(self.li)",
    "self.li.transformList(i, v, v > 0, v * 2).size() >= 0",
    "self.m.transformMap(k, v, v + 'x').size() >= 0",
    "self.m.transformMapEntry(k, v, {v: k}).size() >= 0",
    // maps
    "self.m.all(k, self.m[k] != '')", "'a' in self.m", "self.m['a'] == 'b'", "has(self.m.a)",
    "self.m.a == 'b'", "size(self.m) > 0", "self.m.size() > 0", "self.mi.exists(k, self.mi[k] > 0)",
    "self.mo.all(k, self.mo[k].x > 0)", "self.m.?a.orValue('') == ''", "self.m[?'a'].hasValue()",
    "self.mo.a.x == 1", "self.mo['a'] == self.lo[0]", "self.m == {'a': 'b'}",
    // objects and oldSelf
    "has(self.o.i)", "self.o.i == 1", "self.o.o.i == self.o.i", "self.o == self.o",
    "self.o.?i.orValue(0) == 0", "self.?o.?s.hasValue()", "self.o.o == oldSelf.o.o",
    "self == oldSelf", "self.o != null", "null != self.o", "has(self.pu.known)",
    "self.pu.known == 1", "self.o.?o.?i.orValue(1) > 0", "self.?o.i.hasValue()",
    // embedded resources
    "self.e.apiVersion != ''", "self.e.kind == 'X'", "self.e.metadata.name == 'n'",
    "has(self.e.metadata.generateName)",
    // logic, ternaries, conversions, type values
    "self.b ? self.i > 0 : self.i < 0", "!self.b || self.i > 0", "self.b == true",
    "(self.i > 0) == self.b", "string(self.i) == '1'", "int('1') == 1", "double('1.5') == 1.5",
    "uint(self.i) > 0u", "bool('true')", "dyn(self.i) == 1", "type(self.i) == int",
    "type(self.s) == string", "type(self.l) == list", "type(self.m) == map",
    "type(null) == null_type", "type(self.b) == bool", "type(self.n) == double",
    "type(self.by) == bytes", "type(1u) == uint", "type(self.o) == type(self.o)",
    "(self.b ? self.l : ['a']).size() > 0", "(self.b ? 1 : 2) > 0",
    // literals
    "[1, 2, 3].all(x, x > 0)", "{'a': 1}.a == 1", "[self.s, 'b'].size() == 2",
    "{'a': self.i}['a'] == self.i", "[[1], [2]].size() == 2", "[] == []", "{} == {}",
    "size([]) == 0", "[1, 2].map(x, x * 2) == [2, 4]", "[].all(x, x > 0)",
    "[1, 2, 3].filter(x, x > 1).size() == 2", "[1, 2][0] == 1", "1 in [1, 2]",
    "'a' in {'a': 1}", "{1: 'a'}[1] == 'a'", "[null, null].size() == 2",
    "[self.o, self.o].size() == 2", "[self.lo[0], self.mo['a']].size() == 2",
    // optionals
    "optional.of(1).value() == 1", "optional.none().hasValue() == false",
    "optional.ofNonZeroValue(self.s).orValue('x') != ''", "[?optional.of(1), 2].size() == 2",
    "{?'a': optional.of(1)}.size() == 1", "optional.of(1).or(optional.none()).hasValue()",
    "self.m.?a.optMap(v, v + 'x').orValue('') != ''",
    "self.m.?a.optFlatMap(v, optional.of(v)).hasValue()", "optional.none() == optional.none()",
    "self.?o.?s == optional.of('a')", "self.?o.?s.orValue('') == ''",
    // Kubernetes libraries
    "quantity(self.s).isGreaterThan(quantity('1'))", "quantity('1').add(1).asInteger() == 2",
    "quantity('1').sub(quantity('1')).isInteger()", "quantity('1').compareTo(quantity('2')) < 0",
    "quantity('1').asApproximateFloat() > 0.0", "sign(quantity('-1')) == -1",
    "isQuantity(self.s)", "url(self.s).getHost() != ''", "url(self.s).getScheme() == 'https'",
    "url(self.s).getHostname() != '' && url(self.s).getPort() != ''",
    "url(self.s).getEscapedPath() != ''", "isURL(self.s)", "url(self.s).getQuery().size() >= 0",
    "url(self.s).getQuery()['a'][0] == 'b'", "ip(self.s).family() == 4", "isIP(self.s)",
    "ip.isCanonical(self.s)", "cidr(self.s).containsIP(ip('1.2.3.4'))",
    "cidr(self.s).containsIP('1.2.3.4')", "cidr(self.s).containsCIDR('1.2.3.0/24')",
    "cidr(self.s).containsCIDR(cidr('1.2.3.0/24'))", "cidr(self.s).ip().isLoopback()",
    "cidr(self.s).masked().prefixLength() > 0", "string(ip(self.s)) == self.s",
    "string(cidr(self.s)) == self.s", "isCIDR(self.s)", "ip(self.s).isUnspecified() == false",
    "ip(self.s).isLinkLocalMulticast() || ip(self.s).isLinkLocalUnicast() || ip(self.s).isGlobalUnicast()",
    "ip(self.s) == ip('1.2.3.4')",
    "type(ip(self.s)) == net.IP",
    "type(cidr(self.s)) == net.CIDR",
    "type(quantity(self.s)) == kubernetes.Quantity", "semver(self.s).major() >= 1", "isSemver(self.s, true)",
    "isSemver(self.s)", "semver(self.s, true).minor() >= 0 && semver(self.s).patch() >= 0",
    "semver(self.s).isLessThan(semver('1.0.0'))", "semver(self.s).compareTo(semver('1.0.0')) == 0",
    "!format.dns1123Label().validate(self.s).hasValue()", "format.named('dns1123Label').hasValue()",
    "format.named(self.s).value().validate('a').orValue([]).size() == 0",
    "format.uuid().validate(self.s).hasValue() || format.datetime().validate(self.s).hasValue()",
];

#[test]
fn valid_rules_compile() {
    for rule in VALID {
        let errs = compile(rule);
        assert!(errs.is_empty(), "{rule}: {errs:#?}");
    }
}

/// Upstream's `compilation_test.go`: rules of other kinds of nodes.
#[test]
fn valid_rules_of_scalar_list_and_map_nodes() {
    let cases = [
        (json!({ "type": "string" }), "self.startsWith('s')"),
        (
            json!({ "type": "string", "format": "byte" }),
            "string(self).endsWith('s')",
        ),
        (json!({ "type": "boolean" }), "self == true"),
        (json!({ "type": "integer" }), "self > 0"),
        (json!({ "type": "number" }), "self > 1.0"),
        (list(list(list(string()))), "size(self[0][0]) == 10"),
        (
            list(json!({ "type": "object", "properties": { "nestedObj": {
                "type": "object", "properties": { "val": { "type": "integer", "format": "int64" } },
            } } })),
            "self[0].nestedObj.val == 10",
        ),
        (map(string()), "size(self) > 0"),
        (
            json!({ "x-kubernetes-int-or-string": true }),
            "self == 1 || self == 'a'",
        ),
    ];
    for (node, rule) in cases {
        let errs = compile_on(node, json!([{ "rule": rule }]));
        assert!(errs.is_empty(), "{rule}: {errs:#?}");
    }
}

#[test]
fn valid_transition_rules_with_optional_old_self() {
    let node = json!({ "type": "object", "properties": {
        "i": { "type": "integer" }, "s": string(),
        "o": { "type": "object", "properties": { "i": { "type": "integer" }, "s": string() } },
    } });
    for rule in [
        "self.i >= oldSelf.i.value()",
        "self.s == oldSelf.s.value()",
        "self.o == oldSelf.o.value()",
        "self.o.i >= oldSelf.o.i.orValue(1)",
        "oldSelf.hasValue() ? self.o.i >= oldSelf.o.i.value() : true",
        "!oldSelf.hasValue() || self == oldSelf.value()",
        "oldSelf.?o.?s.orValue('') == self.o.s",
    ] {
        let rules = json!([{ "rule": rule, "optionalOldSelf": true }]);
        let errs = compile_on(node.clone(), rules);
        assert!(errs.is_empty(), "{rule}: {errs:#?}");
    }
}

#[test]
fn no_matching_overload() {
    for (rule, want) in [
        (
            "self.i + 'a' == 1",
            "ERROR: <input>:1:8: found no matching overload for '_+_' applied to '(int, string)'\n | self.i + 'a' == 1\n | .......^",
        ),
        (
            "size(self.i) == 1",
            "ERROR: <input>:1:5: found no matching overload for 'size' applied to '(int)'\n | size(self.i) == 1\n | ....^",
        ),
        (
            "self.i.size() == 1",
            "ERROR: <input>:1:12: found no matching overload for 'size' applied to 'int.()'\n | self.i.size() == 1\n | ...........^",
        ),
        (
            "self.b ? 1 : 'a'",
            "ERROR: <input>:1:8: found no matching overload for '_?_:_' applied to '(bool, int, string)'\n | self.b ? 1 : 'a'\n | .......^",
        ),
        (
            "1 in ['a']",
            "ERROR: <input>:1:3: found no matching overload for '@in' applied to '(int, list(string))'\n | 1 in ['a']\n | ..^",
        ),
        (
            "self.d > 1",
            "ERROR: <input>:1:8: found no matching overload for '_>_' applied to '(duration, int)'\n | self.d > 1\n | .......^",
        ),
        (
            "self.t.getHours(1) == 1",
            "ERROR: <input>:1:16: found no matching overload for 'getHours' applied to 'timestamp.(int)'\n | self.t.getHours(1) == 1\n | ...............^",
        ),
        (
            "!self.i",
            "ERROR: <input>:1:1: found no matching overload for '!_' applied to '(int)'\n | !self.i\n | ^",
        ),
        (
            "self.l[0] == 1",
            "ERROR: <input>:1:11: found no matching overload for '_==_' applied to '(string, int)'\n | self.l[0] == 1\n | ..........^",
        ),
        (
            "self.m[1] == 'a'",
            "ERROR: <input>:1:7: found no matching overload for '_[_]' applied to '(map(string, string), int)'\n | self.m[1] == 'a'\n | ......^",
        ),
        (
            "self.lo.map(o, o.name).size() == 'a'",
            "found no matching overload for '_==_' applied to '(int, string)'\n | self.lo.map(o, o.name).size() == 'a'\n | ..............................^",
        ),
        (
            "self.s == null",
            "found no matching overload for '_==_' applied to '(string, null)'\n | self.s == null\n | .......^",
        ),
        (
            "self.i == 1.0",
            "found no matching overload for '_==_' applied to '(int, double)'\n | self.i == 1.0\n | .......^",
        ),
        (
            "self.l.isSorted() && self.lo.isSorted()",
            "found no matching overload for 'isSorted' applied to 'list(object).()'\n | self.l.isSorted() && self.lo.isSorted()\n | .....................................^",
        ),
        // `sign` is a global function upstream
        (
            "quantity('-1').sign() == -1",
            "found no matching overload for 'sign' applied to 'kubernetes.Quantity.()'\n | quantity('-1').sign() == -1\n | ...................^",
        ),
        (
            "ip(self.s).family() == ip('::1')",
            "found no matching overload for '_==_' applied to '(int, net.IP)'\n | ip(self.s).family() == ip('::1')\n | ....................^",
        ),
        (
            "self.s.lowerAscii(1) == ''",
            "found no matching overload for 'lowerAscii' applied to 'string.(int)'\n | self.s.lowerAscii(1) == ''\n | .................^",
        ),
        (
            "self.li.join(',') == ''",
            "found no matching overload for 'join' applied to 'list(int).(string)'\n | self.li.join(',') == ''\n | ............^",
        ),
        (
            "isIP(cidr('192.168.0.0/24'))",
            "ERROR: <input>:1:5: found no matching overload for 'isIP' applied to '(net.CIDR)'\n | isIP(cidr('192.168.0.0/24'))\n | ....^",
        ),
        (
            "isQuantity([1, 2, 3])",
            "ERROR: <input>:1:11: found no matching overload for 'isQuantity' applied to '(list(int))'\n | isQuantity([1, 2, 3])\n | ..........^",
        ),
    ] {
        assert_error(rule, want);
    }
}

#[test]
fn objects_of_different_fields_are_different_types() {
    let errs = compile("self.o == self.o.o");
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].contains("found no matching overload for '_==_' applied to '(selfType")
            && errs[0].contains(".o, selfType")
            && errs[0].contains(".o.o)'"),
        "{errs:?}"
    );
}

#[test]
fn other_type_errors() {
    for (rule, want) in [
        (
            "self.l.all(x, x)",
            "ERROR: <input>:1:15: expected type 'bool' but found 'string'\n | self.l.all(x, x)\n | ..............^",
        ),
        (
            "self.b && self.i",
            "ERROR: <input>:1:15: expected type 'bool' but found 'int'\n | self.b && self.i\n | ..............^",
        ),
        (
            "self.i.x == 1",
            "ERROR: <input>:1:7: type 'int' does not support field selection\n | self.i.x == 1\n | ......^",
        ),
        (
            "self.i.all(x, true)",
            "ERROR: <input>:1:5: expression of type 'int' cannot be range of a comprehension (must be list, map, or dynamic)\n | self.i.all(x, true)\n | ....^",
        ),
        (
            "self.s.foo()",
            "ERROR: <input>:1:11: undeclared reference to 'foo' (in container '')\n | self.s.foo()\n | ..........^",
        ),
        (
            "self.lo.all(o, o.nope == 1)",
            "ERROR: <input>:1:17: undefined field 'nope'\n | self.lo.all(o, o.nope == 1)\n | ................^",
        ),
        (
            "self.e.metadata.labels == {}",
            "undefined field 'labels'\n | self.e.metadata.labels == {}\n | ...............^",
        ),
        (
            "self.?nope.hasValue()",
            "undefined field 'nope'\n | self.?nope.hasValue()\n | ....^",
        ),
        (
            "self.pu.unknown == 1",
            "undefined field 'unknown'\n | self.pu.unknown == 1\n | .......^",
        ),
        (
            "[1, self.ios].size() == 2",
            "ERROR: <input>:1:9: expected type 'int' but found 'dyn'\n | [1, self.ios].size() == 2\n | ........^",
        ),
        (
            "self.m.all(k, v, v)",
            "ERROR: <input>:1:18: expected type 'bool' but found 'string'\n | self.m.all(k, v, v)\n | .................^",
        ),
        (
            "self.li.exists(i, v, v + 1)",
            "ERROR: <input>:1:24: expected type 'bool' but found 'int'\n | self.li.exists(i, v, v + 1)\n | .......................^",
        ),
        (
            "Foo{a: 1} == Foo{a: 1}",
            "ERROR: <input>:1:4: undeclared reference to 'Foo' (in container '')\n | Foo{a: 1} == Foo{a: 1}\n | ...^\nERROR: <input>:1:17: undeclared reference to 'Foo' (in container '')\n | Foo{a: 1} == Foo{a: 1}\n | ................^",
        ),
        (
            "[?optional.of(1), 'a'].size() == 2",
            "ERROR: <input>:1:19: expected type 'int' but found 'string'\n | [?optional.of(1), 'a'].size() == 2\n | ..................^",
        ),
        (
            "[?1].size() == 1",
            "ERROR: <input>:1:3: expected type 'optional_type(int)' but found 'int'\n | [?1].size() == 1\n | ..^",
        ),
        (
            "self.lo.map(o, o.v).exists(v, v == 'a')",
            "found no matching overload for '_==_' applied to '(int, string)'\n | self.lo.map(o, o.v).exists(v, v == 'a')\n | ................................^",
        ),
        (
            "self.l.map(x, x, x).size() > 0",
            "ERROR: <input>:1:11: found no matching overload for '_?_:_' applied to '(string, list(string), list(string))'\n | self.l.map(x, x, x).size() > 0\n | ..........^",
        ),
        (
            "self.l.filter(x, 1).size() > 0",
            "ERROR: <input>:1:14: found no matching overload for '_?_:_' applied to '(int, list(string), list(string))'\n | self.l.filter(x, 1).size() > 0\n | .............^",
        ),
        (
            "self.i.all(k, v, true)",
            "ERROR: <input>:1:5: expression of type 'int' cannot be range of a comprehension (must be list, map, or dynamic)\n | self.i.all(k, v, true)\n | ....^",
        ),
        (
            "self.m.transformMapEntry(k, v, v) == {}",
            "ERROR: <input>:1:25: found no matching overload for 'cel.@mapInsert' applied to '(map(dyn, dyn), string)'\n | self.m.transformMapEntry(k, v, v) == {}\n | ........................^",
        ),
        (
            "{'a': 1, 'b': 'c'}.size() == 2",
            "ERROR: <input>:1:15: expected type 'int' but found 'string'\n | {'a': 1, 'b': 'c'}.size() == 2\n | ..............^",
        ),
    ] {
        assert_error(rule, want);
    }
}

#[test]
fn issues_are_sorted_by_position() {
    assert_error(
        "self.y == 1 && self.x == 2 && size(self.i) > 0",
        "compilation failed: ERROR: <input>:1:5: undefined field 'y'\n | self.y == 1 && self.x == 2 && size(self.i) > 0\n | ....^\nERROR: <input>:1:20: undefined field 'x'\n | self.y == 1 && self.x == 2 && size(self.i) > 0\n | ...................^\nERROR: <input>:1:35: found no matching overload for 'size' applied to '(int)'\n | self.y == 1 && self.x == 2 && size(self.i) > 0\n | ..................................^",
    );
}

#[test]
fn rules_must_evaluate_to_a_bool() {
    for rule in [
        "self.i",
        "self.ios",
        "self.l",
        "42",
        "self.o",
        "dyn(true)",
        "self.b ? 1 : 2",
        "self.l.map(x, x)",
        "[][0]",
        "self.ios[0]",
        "self.li.map(x, dyn(x))[0]",
    ] {
        assert_error(rule, ": cel expression must evaluate to a bool");
    }
    // Not known to be a bool here, but not known not to be one either.
    assert!(compile("self.li.map(x, x > 0)[0]").is_empty());
}

#[test]
fn message_expressions_must_evaluate_to_a_string() {
    for (expr, ok) in [
        ("'bad: ' + self.s", true),
        ("self.s", true),
        ("string(self.i)", true),
        ("self.b ? 'a' : 'b'", true),
        ("self.l.join(',')", true),
        ("'%d'.format([self.i])", true),
        ("self.l.map(x, x)[0]", true),
        ("42", false),
        ("self.ios", false),
        ("self.i", false),
        ("self.l", false),
    ] {
        let rules = json!([{ "rule": "true", "messageExpression": expr }]);
        let errs = compile_on(node(), rules);
        match ok {
            true => assert!(errs.is_empty(), "{expr}: {errs:#?}"),
            false => assert!(
                errs.len() == 1
                    && errs[0].ends_with(": messageExpression must evaluate to a string"),
                "{expr}: {errs:#?}"
            ),
        }
    }
}

/// Upstream's `compilation_test.go`, "optional primitive transition rule type checking".
#[test]
fn optional_old_self_is_an_optional() {
    for (rule, want) in [
        (
            "self >= oldSelf",
            "found no matching overload for '_>=_' applied to '(int, optional_type(int))'\n | self >= oldSelf\n | .....^",
        ),
        (
            "self >= oldSelf.orValue('')",
            "found no matching overload for 'orValue' applied to 'optional_type(int).(string)'\n | self >= oldSelf.orValue('')\n | .......................^",
        ),
    ] {
        let rules = json!([{ "rule": rule, "optionalOldSelf": true }]);
        // The rule does not compile, so it is not known to use oldSelf either.
        let errs = compile_on(json!({ "type": "integer" }), rules);
        assert!(
            errs.len() == 2
                && errs[0].ends_with(want)
                && errs[1].ends_with("may not be set if oldSelf is not used in rule"),
            "{rule}: {errs:#?}"
        );
    }
    for rule in [
        "self >= oldSelf.value()",
        "self >= oldSelf.orValue(1)",
        "oldSelf.hasValue() ? self >= oldSelf.value() : true",
    ] {
        let rules = json!([{ "rule": rule, "optionalOldSelf": true }]);
        assert!(
            compile_on(json!({ "type": "integer" }), rules).is_empty(),
            "{rule}"
        );
    }
}

/// Upstream's `compilation_test.go`, "invalid for escaping": an object is not an int.
#[test]
fn object_compared_with_int() {
    let errs = compile("self == 10");
    assert!(
        errs.len() == 1
            && errs[0].contains(": compilation failed: ERROR: <input>:1:6: found no matching overload for '_==_' applied to '(selfType")
            && errs[0].ends_with(", int)'\n | self == 10\n | .....^"),
        "{errs:?}"
    );
}

/// The types the checker infers (`Checker::type_of`), printed as cel-go prints them.
#[test]
fn inferred_types() {
    use crate::cel::check::Checker;
    use crate::cel::environment::env;
    use crate::cel::node::Node;
    use cel::common::ast::Expr;

    let schema = node();
    let env = env();
    for (expr, want) in [
        ("self.l", "list(string)"),
        ("self.li.map(x, x * 2)", "list(int)"),
        ("self.lo.filter(o, o.v > 0)", "list(object)"),
        ("self.li.transformList(i, v, v > 0)", "list(bool)"),
        ("self.m.transformMap(k, v, size(v))", "map(string, int)"),
        ("self.m.transformMapEntry(k, v, {v: 1})", "map(string, int)"),
        ("self.m.?a.optMap(v, size(v))", "optional_type(int)"),
        ("[]", "list(dyn)"),
        ("[] + [1]", "list(int)"),
        ("self.mo", "map(string, object)"),
        ("self.t", "timestamp"),
        ("self.dt", "timestamp"),
        ("self.d", "duration"),
        ("self.by", "bytes"),
        ("self.ios", "dyn"),
        ("self.e.metadata.name", "string"),
        ("self.m.?a", "optional_type(string)"),
        ("[1, 'a']", "list(dyn)"),
        ("{'a': [1]}", "map(string, list(int))"),
        ("self.li[0] + 1", "int"),
        ("self.ios + 1", "int"),
        ("type(self.i)", "type(int)"),
        ("quantity(self.s)", "kubernetes.Quantity"),
        ("cidr(self.s).ip()", "net.IP"),
        ("url(self.s).getQuery()", "map(string, list(string))"),
        ("self.l.all(i, v, i > 0)", "bool"),
    ] {
        let program = env.compile(expr).unwrap();
        let mut checker = Checker::new(Node(&schema), false, false);
        let t = checker.check(program.expression());
        assert!(checker.issues.is_empty(), "{expr}");
        assert_eq!(t.to_string(), want, "{expr}");
        assert_eq!(
            checker
                .type_of(program.expression().id)
                .map(ToString::to_string),
            Some(want.to_owned())
        );
    }
    let program = env.compile("self.o.o.i").unwrap();
    let mut checker = Checker::new(Node(&schema), false, false);
    checker.check(program.expression());
    let Expr::Select(sel) = &program.expression().expr else {
        panic!("not a selection");
    };
    let object = checker.type_of(sel.operand.id).unwrap().to_string();
    assert!(
        object.starts_with("selfType") && object.ends_with(".o.o"),
        "{object}"
    );
}

/// Compile errors of upstream's `validation_test.go` (the error maps of its cases).
#[test]
fn upstream_compile_errors() {
    for (rule, want) in [
        (
            "[1, 'a', false].filter(x, string(x) == 'a')",
            "compilation failed: ERROR: <input>:1:5: expected type 'int' but found 'string'\n | [1, 'a', false].filter(x, string(x) == 'a')\n | ....^",
        ),
        (
            "{'k1': 'a', 'k2': 1, 'k2': false}.size() == 3",
            "compilation failed: ERROR: <input>:1:19: expected type 'string' but found 'int'\n | {'k1': 'a', 'k2': 1, 'k2': false}.size() == 3\n | ..................^\nERROR: <input>:1:28: expected type 'string' but found 'bool'\n | {'k1': 'a', 'k2': 1, 'k2': false}.size() == 3\n | ...........................^",
        ),
        (
            "self.lo[0] == {'k': 'a', 'v': '1'}",
            "found no matching overload for '_==_' applied to '(object, map(string, string))'\n | self.lo[0] == {'k': 'a', 'v': '1'}\n | ...........^",
        ),
        (
            "self.o['i'] == 1",
            "found no matching overload for '_[_]' applied to '(selfType",
        ),
        (
            "['a', 'b'].sum() == 'c'",
            "found no matching overload for 'sum' applied to 'list(string).()'\n | ['a', 'b'].sum() == 'c'\n | ..............^",
        ),
        (
            "[[1], [2]].min() == [1]",
            "found no matching overload for 'min' applied to 'list(list(int)).()'\n | [[1], [2]].min() == [1]\n | ..............^",
        ),
        (
            "[{'a': 1}, {'b': 2}].max() == {'b': 2}",
            "found no matching overload for 'max' applied to 'list(map(string, int)).()'\n | [{'a': 1}, {'b': 2}].max() == {'b': 2}\n | ........................^",
        ),
        (
            "authorizer.path('/healthz').check('get').allowed()",
            "ERROR: <input>:1:1: undeclared reference to 'authorizer' (in container '')\n | authorizer.path('/healthz').check('get').allowed()\n | ^",
        ),
    ] {
        let errs = compile(rule);
        let found = errs.len() == 1
            && (errs[0].ends_with(want) || (want.ends_with("(selfType") && errs[0].contains(want)));
        assert!(found, "{rule}: {errs:#?}\nwant: {want}");
    }
    let errs = compile("string(type(self.lo[0])).endsWith('.lo.@idx')");
    assert!(
        errs.len() == 1
            && errs[0]
                .contains("found no matching overload for 'string' applied to '(type(object))'"),
        "{errs:#?}"
    );
}

/// Deep expressions check, and keep their types.
#[test]
fn deep_expressions() {
    // cel-rust's parser takes far more stack per nested list literal than per operator.
    let nested = "[".repeat(10) + "1" + &"]".repeat(10);
    assert!(compile(&format!("{nested} == {nested}")).is_empty());
    let errs = compile(&format!("{nested} == 1"));
    let list10 = "list(".repeat(10) + "int" + &")".repeat(10);
    assert!(
        errs.len() == 1
            && errs[0].contains(&format!(
                "found no matching overload for '_==_' applied to '({list10}, int)'"
            )),
        "{errs:?}"
    );
    let sum = vec!["self.i"; 240].join(" + ");
    assert!(compile(&format!("{sum} > 0")).is_empty());
}
