use serde_json::json;

use super::check_rules;

#[test]
fn lists_library() {
    let props = json!({
        "ints": { "type": "array", "items": { "type": "integer" } },
        "strs": { "type": "array", "items": { "type": "string" } },
        "empty": { "type": "array", "items": { "type": "integer" } },
    });
    let obj = json!({ "ints": [1, 2, 2, 5], "strs": ["b", "a", "b"], "empty": [] });
    check_rules(
        props,
        obj,
        &[
            "self.ints.isSorted()",
            "!self.strs.isSorted()",
            "self.ints.sum() == 10",
            "self.empty.sum() == 0",
            "self.ints.min() == 1 && self.ints.max() == 5",
            "self.strs.min() == 'a'",
            "self.strs.indexOf('b') == 0 && self.strs.lastIndexOf('b') == 2",
            "self.ints.indexOf(7) == -1",
            "'abc'.indexOf('c') == 2",
        ],
        &[(
            "self.empty.min() == 0",
            "min called on empty list evaluating rule",
        )],
    );
}

#[test]
fn regex_library() {
    let props = json!({ "s": { "type": "string" } });
    let obj = json!({ "s": "abc 123 def 456" });
    check_rules(
        props,
        obj,
        &[
            "self.s.find('[0-9]+') == '123'",
            "self.s.find('x') == ''",
            "self.s.findAll('[0-9]+') == ['123', '456']",
            "self.s.findAll('[0-9]+', 1) == ['123']",
            "self.s.matches('^abc')",
        ],
        &[("self.s.find('[') == ''", "Illegal regex: ")],
    );
}

#[test]
fn strings_and_macros() {
    let props = json!({
        "s": { "type": "string" },
        "l": { "type": "array", "items": { "type": "integer" } },
        "m": { "type": "object", "additionalProperties": { "type": "string" } },
    });
    let obj = json!({ "s": "Hello", "l": [1, 2, 3], "m": { "k": "v" } });
    check_rules(
        props,
        obj,
        &[
            "self.s.lowerAscii() == 'hello'",
            "self.s.split('l').size() == 3",
            "self.s.substring(1, 3) == 'el'",
            "self.l.all(x, x > 0) && self.l.exists(x, x == 2) && self.l.exists_one(x, x == 3)",
            "self.l.map(x, x * 2) == [2, 4, 6] && self.l.filter(x, x > 1).size() == 2",
            "self.m.all(k, self.m[k] == 'v') && 'k' in self.m",
            "self.m.?missing.orValue('d') == 'd'",
        ],
        &[],
    );
}

#[test]
fn quantity_library() {
    let props = json!({ "q": { "type": "string" } });
    let obj = json!({ "q": "1.5Gi" });
    check_rules(
        props,
        obj,
        &[
            "isQuantity(self.q) && !isQuantity('1.5x')",
            "quantity(self.q).isGreaterThan(quantity('1Gi'))",
            "quantity('1Gi').isLessThan(quantity(self.q))",
            "quantity('1k').compareTo(quantity('1000')) == 0",
            "quantity('1k') == quantity('1000')",
            "quantity('2').add(3).asInteger() == 5",
            "quantity('2').sub(quantity('500m')).asApproximateFloat() == 1.5",
            "!quantity('1.5').isInteger()",
            "sign(quantity('-1')) == -1 && sign(quantity('0')) == 0 && sign(quantity(self.q)) == 1",
        ],
        &[(
            "quantity('1.5').asInteger() == 1",
            "cannot convert value to integer evaluating rule",
        )],
    );
}

#[test]
fn semver_library() {
    let props = json!({ "v": { "type": "string" } });
    let obj = json!({ "v": "1.2.3-rc.1" });
    check_rules(
        props,
        obj,
        &[
            "isSemver(self.v) && !isSemver('v1.0') && isSemver('v1.0', true)",
            "semver(self.v).major() == 1 && semver(self.v).minor() == 2 && semver(self.v).patch() == 3",
            "semver(self.v).isLessThan(semver('1.2.3'))",
            "semver('1.10.0').isGreaterThan(semver('1.9.0'))",
            "semver('1.2.3+build').compareTo(semver('1.2.3')) == 0",
            "semver('1.2.3') == semver('1.2.3+meta')",
            "semver('01.01', true) == semver('1.1.0')",
        ],
        &[(
            "semver('Three') == semver('1.0.0')",
            "No Major.Minor.Patch elements found evaluating rule",
        )],
    );
}

#[test]
fn standard_functions_smoke() {
    let props =
        json!({ "t": { "type": "string", "format": "date-time" }, "s": { "type": "string" } });
    let obj = json!({ "t": "2024-03-05T10:20:30Z", "s": " a,b " });
    check_rules(
        props,
        obj,
        &[
            "strings.quote('a\"b') == '\"a\\\\\"b\"'",
            "self.s.trim() == 'a,b'",
            "self.s.trim().split(',', 1) == ['a,b']",
            "'abc'.lastIndexOf('c') == 2 && 'abc'.charAt(1) == 'b'",
            "self.t.getDayOfWeek() == 2 && self.t.getDayOfYear() == 64",
            "self.t.getHours() == 10 && self.t.getMinutes() == 20 && self.t.getSeconds() == 30",
            "self.t + duration('1h') > self.t",
            "int(self.t) == 1709634030",
            "uint(1) == 1u && double('1.5') == 1.5 && bool('true')",
            "dyn(1) == 1 && type(dyn('a')) == string",
            "size('héllo') == 5 && size(b'ab') == 2",
            "'%s-%d'.format(['a', 1]) == 'a-1'",
            "[1, 2, 3].exists(x, x > 2) && !([1, 2].all(x, x > 1))",
            "{'a': 1}.all(k, k == 'a')",
            "1 in [1, 2] && 'a' in {'a': 1}",
            "(true ? 1 : 2) == 1",
            "-5 % 3 == -2 && 7 / 2 == 3 && 7.0 / 2.0 == 3.5",
        ],
        &[],
    );
}
