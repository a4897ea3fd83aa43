import BoardwalkJSON
import BoardwalkModel
import Testing

/// Malformed input, each with the exact message it must produce.
@Suite struct MalformedTests {
    /// A UTF-16 file (little- or big-endian, with or without a byte-order mark) is named as such, not as a control
    /// character in a string.
    @Test(arguments: [false, true], [false, true])
    func utf16IsNamed(bigEndian: Bool, mark: Bool) throws {
        let text =
            #"{"type":"onboarding_loaded","meta":{"onboarding_id":"o1","screen_cid":"s1","screen_index":1,"total_screens":3}}"#
        var bytes: [UInt8] = mark ? (bigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE]) : []
        for unit in text.utf16 {
            let pair = [UInt8(unit & 0xFF), UInt8(unit >> 8)]
            bytes += bigEndian ? pair.reversed() : pair
        }
        let reader = try EventReader()
        let error = #expect(throws: JSONReadError.self) {
            try bytes.withUnsafeBytes { _ = try reader.read(line: $0, arrival: arrival) }
        }
        #expect(error?.reason.hasPrefix("the line looks like UTF-16") == true, "\(String(describing: error))")
        let named = mark ? "UTF-16" : bigEndian ? "UTF-16BE" : "UTF-16LE"
        #expect(error?.reason.contains("iconv -f \(named) -t UTF-8") == true, "\(String(describing: error))")
    }

    /// A UTF-32 line is named as UTF-32, in the byte order its zeros show, not as UTF-16.
    @Test(arguments: [false, true])
    func utf32IsNamed(bigEndian: Bool) throws {
        let text = #"{"type":"onboarding_loaded"}"#
        var bytes: [UInt8] = []
        for scalar in text.unicodeScalars {
            let v = scalar.value
            let unit = [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)]
            bytes += bigEndian ? unit.reversed() : unit
        }
        let reader = try EventReader()
        let error = #expect(throws: JSONReadError.self) {
            try bytes.withUnsafeBytes { _ = try reader.read(line: $0, arrival: arrival) }
        }
        let named = bigEndian ? "UTF-32BE" : "UTF-32LE"
        #expect(error?.reason.hasPrefix("the line looks like UTF-32") == true, "\(String(describing: error))")
        #expect(error?.reason.contains("iconv -f \(named) -t UTF-8") == true, "\(String(describing: error))")
    }

    static let cases: [(String, String, String)] = [
        (
            "broken JSON: missing comma",
            "{\"type\":\"close\" \"action_id\":\"x\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, column 17: invalid JSON"
        ),
        ("broken JSON: missing colon", "{\"type\" \"close\"}", "line 1, column 9: invalid JSON"),
        (
            "broken JSON: trailing comma",
            "{\"type\":\"close\",\"action_id\":\"x\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3},}",
            "line 1, column 116: invalid JSON"
        ),
        (
            "truncated object", "{\"type\":\"close\",\"action_id\":\"x\",\"meta\":{\"onboarding_id\":\"o1\"",
            "line 1, column 60: an object or array is not closed before the line ends"
        ),
        ("truncated in a string", "{\"type\":\"clo", "line 1: unclosed string"),
        (
            "bad literal",
            "{\"type\":\"close\",\"action_id\":\"x\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3},\"z\":tru}",
            "line 1, column 120: invalid JSON"
        ),
        ("single quotes", "{'type':'close'}", "line 1, column 2: invalid JSON"),
        (
            "trailing content",
            "{\"type\":\"onboarding_loaded\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}} {}",
            "line 1, column 113: unexpected content after the object"
        ),
        // simdjson calls these unclosed too; the message says what is wrong and where.
        (
            "a word after the object",
            "{\"type\":\"onboarding_loaded\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}} x",
            "line 1, column 113: unexpected content after the object"
        ),
        (
            "a comma after the object",
            "{\"type\":\"onboarding_loaded\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}, ",
            "line 1, column 112: unexpected content after the object"
        ),
        (
            "a brace inside a string does not close", "{\"type\":\"x}\"",
            "line 1, column 12: an object or array is not closed before the line ends"
        ),
        ("top level array", "[{\"type\":\"close\"}]", "line 1, column 1: expected a JSON object, found an array"),
        ("top level string", "\"close\"", "line 1, column 1: expected a JSON object, found a string"),
        ("top level number", "  42", "line 1, column 3: expected a JSON object, found a number"),
        ("top level null", "null", "line 1, column 1: expected a JSON object, found null"),
        ("top level false", " false ", "line 1, column 2: expected a JSON object, found a boolean"),
        // Words that start like a literal are not one (the user's pass saw "found null" for `notjson`).
        ("a word starting with n", "notjson", "line 1, column 1: invalid JSON"),
        ("a word starting with t", "trash", "line 1, column 1: invalid JSON"),
        ("a word starting with f", "falsehood", "line 1, column 1: invalid JSON"),
        ("empty line", "", "line 1: empty line"),
        ("blank line", "   \u{9} ", "line 1: empty line"),
        (
            "screen_index as a string",
            "{\"type\":\"onboarding_loaded\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":\"2\",\"total_screens\":3}}",
            "line 1, column 91, meta.screen_index: expected an integer, found the string \"2\""
        ),
        (
            "screen_index as a fraction",
            "{\"type\":\"onboarding_loaded\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":2.5,\"total_screens\":3}}",
            "line 1, column 91, meta.screen_index: expected an integer, found the number 2.5"
        ),
        (
            "negative screen index",
            "{\"type\":\"onboarding_loaded\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":-1,\"total_screens\":3}}",
            "line 1, column 91, meta.screen_index: screen index -1 is outside 0...65534"
        ),
        (
            "absurd screen index",
            "{\"type\":\"onboarding_loaded\",\"meta\":{\"onboardingId\":\"o1\",\"screenClientId\":\"s1\",\"screenIndex\":70000,\"screensTotal\":3}}",
            "line 1, column 93, meta.screenIndex: screen index 70000 is outside 0...65534"
        ),
        (
            "absurd screen count",
            "{\"type\":\"onboarding_loaded\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":0,\"total_screens\":99999999999}}",
            "line 1, column 109, meta.total_screens: screen count 99999999999 is outside 0...65535"
        ),
        (
            "missing meta field",
            "{\"type\":\"onboarding_loaded\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_index\":0,\"total_screens\":1}}",
            "line 1, column 36, meta.screen_cid: required, but missing"
        ),
        (
            "missing camelCase meta field",
            "{\"type\":\"onboarding_loaded\",\"meta\":{\"onboardingId\":\"o1\",\"screenClientId\":\"s\",\"screenIndex\":0}}",
            "line 1, column 36, meta.screensTotal: required, but missing"
        ),
        ("missing meta", "{\"type\":\"close\",\"action_id\":\"x\"}", "line 1, meta: required, but missing"),
        (
            "meta not an object", "{\"type\":\"close\",\"action_id\":\"x\",\"meta\":[]}",
            "line 1, column 40, meta: expected an object, found an array"
        ),
        (
            "unknown type",
            "{\"type\":\"page_view\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, column 9, type: unknown type \"page_view\"; expected one of analytics, state_updated, open_paywall, custom, close, onboarding_loaded, error"
        ),
        (
            "type not a string",
            "{\"type\":3,\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, column 9, type: expected a string, found the number 3"
        ),
        (
            "unknown kind",
            "{\"kind\":\"tap\",\"action_id\":\"x\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, column 9, kind: unknown kind \"tap\"; expected one of analytics, state_updated, open_paywall, custom, close, onboarding_loaded, error"
        ),
        (
            "kind contradicts type",
            "{\"kind\":\"custom\",\"type\":\"close\",\"action_id\":\"x\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, column 9, kind: \"custom\" contradicts type \"close\""
        ),
        (
            "unknown bridge id",
            "{\"id\":\"onboarding_on_swipe\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, column 7, id: unknown bridge event id \"onboarding_on_swipe\""
        ),
        (
            "action without kind",
            "{\"action_id\":\"x\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, column 14, action_id: an action without \"type\" or \"kind\": custom, close and open_paywall actions look alike, so the envelope must say \"kind\""
        ),
        (
            "no event at all", "{\"hello\":\"world\"}",
            "line 1: no event found: expected \"type\", \"meta\" or another shape from docs/events.md"
        ),
        (
            "unknown element_type",
            "{\"type\":\"state_updated\",\"element_id\":\"e\",\"element_type\":\"slider\",\"value\":{},\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, column 57, element_type: unknown element type \"slider\"; expected one of select, multi_select, input, date_picker"
        ),
        (
            "unknown input type",
            "{\"type\":\"state_updated\",\"element_id\":\"e\",\"element_type\":\"input\",\"value\":{\"type\":\"phone\",\"value\":\"1\"},\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, column 81, value.type: unknown input type \"phone\"; expected one of text, email, number"
        ),
        (
            "non-numeric text in a number input",
            "{\"type\":\"state_updated\",\"element_id\":\"e\",\"element_type\":\"input\",\"value\":{\"type\":\"number\",\"value\":\"25 years\"},\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, column 98, value.value: expected a number (or a string holding one), found the string \"25 years\""
        ),
        (
            "multi-select element without label",
            "{\"elementId\":\"e\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3},\"params\":{\"type\":\"multiSelect\",\"value\":[{\"id\":\"a\",\"value\":\"b\",\"label\":\"c\"},{\"id\":\"a\",\"value\":\"b\"}]}}",
            "line 1, column 176, params.value[1].label: required, but missing"
        ),
        (
            "multi-select label not a string",
            "{\"elementId\":\"e\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3},\"params\":{\"type\":\"multiSelect\",\"value\":[{\"id\":\"a\",\"value\":\"b\",\"label\":7}]}}",
            "line 1, column 171, params.value[0].label: expected a string, found the number 7"
        ),
        (
            "select value is an array",
            "{\"type\":\"state_updated\",\"element_id\":\"e\",\"element_type\":\"select\",\"value\":[],\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, column 74, value: expected an object, found an array"
        ),
        (
            "missing element_id",
            "{\"type\":\"state_updated\",\"element_type\":\"select\",\"value\":{\"id\":\"a\",\"value\":\"b\",\"label\":\"c\"},\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, element_id: required, but missing"
        ),
        (
            "date part not an integer",
            "{\"type\":\"state_updated\",\"element_id\":\"e\",\"element_type\":\"date_picker\",\"value\":{\"day\":\"15\"},\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, column 86, value.day: expected an integer, found the string \"15\""
        ),
        (
            "missing analytics name",
            "{\"type\":\"analytics\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, name: required, but missing"
        ),
        (
            "error without message", "{\"type\":\"error\",\"error\":{\"domain\":\"x\",\"code\":1}}",
            "line 1, column 25, error.message: required, but missing"
        ),
        (
            "bad ISO timestamp",
            "{\"timestamp\":\"2026-02-30T10:00:00Z\",\"type\":\"onboarding_loaded\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, column 14, timestamp: expected an ISO-8601 time in the years 1970 through 9999, found the string \"2026-02-30T10:00:00Z\""
        ),
        (
            "negative epoch",
            "{\"ts\":-5,\"type\":\"onboarding_loaded\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, column 7, ts: the epoch time -5 is before 1970"
        ),
        (
            "fractional epoch",
            "{\"ts\":1.5,\"type\":\"onboarding_loaded\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, column 7, ts: the epoch time 1.5 could be in more than one unit: seconds, milliseconds and "
                + "microseconds are told apart by size only for times after 2001-09-09; give the unit (--time-unit "
                + "s|ms|us, EventReader.timeUnit)"
        ),
        (
            "session id not a string",
            "{\"session_id\":12,\"type\":\"onboarding_loaded\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, column 15, session_id: expected a string, found the number 12"
        ),
        (
            "view id disagrees with session_id",
            "{\"session_id\":\"a\",\"view\":{\"id\":\"b\"},\"type\":\"onboarding_loaded\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, column 32, view.id: disagrees with session_id"
        ),
        (
            "duplicate key",
            "{\"type\":\"close\",\"type\":\"custom\",\"action_id\":\"x\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, column 17, type: duplicate key"
        ),
        (
            "two aliases of one field",
            "{\"type\":\"onboarding_loaded\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"screenIndex\":1,\"total_screens\":3}}",
            "line 1, column 93, meta.screenIndex: duplicate key (also given as screen_index)"
        ),
        (
            "envelope field twice",
            "{\"ts\":1,\"event\":{\"ts\":2,\"type\":\"onboarding_loaded\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}}",
            "line 1, column 23, event.ts: given both at the top level and inside \"event\""
        ),
        (
            "wrapped message with top-level message fields",
            "{\"type\":\"close\",\"event\":{\"type\":\"close\",\"action_id\":\"x\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}}",
            "line 1, column 9, type: a line that wraps its message in \"event\" cannot also have message fields at the top level"
        ),
        (
            "lone surrogate escape",
            "{\"type\":\"custom\",\"action_id\":\"\\ud800x\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, column 30: invalid string: a bad escape or a lone surrogate"
        ),
        (
            "lone low surrogate escape",
            "{\"type\":\"custom\",\"action_id\":\"\\udc00\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, column 30: invalid string: a bad escape or a lone surrogate"
        ),
        (
            "bad escape",
            "{\"type\":\"custom\",\"action_id\":\"\\q\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, column 30: invalid string: a bad escape or a lone surrogate"
        ),
        (
            "raw control character",
            "{\"type\":\"custom\",\"action_id\":\"a\u{1}\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, column 32: a control character in a string must be escaped"
        ),
        (
            "huge number",
            "{\"type\":\"state_updated\",\"element_id\":\"e\",\"element_type\":\"input\",\"value\":{\"type\":\"number\",\"value\":1e999},\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3}}",
            "line 1, column 98: invalid or out-of-range number"
        ),
        (
            "huge integer",
            "{\"type\":\"error\",\"error\":{\"domain\":\"d\",\"code\":123456789012345678901234567890,\"message\":\"m\"}}",
            "line 1, column 46: invalid or out-of-range number"
        ),
        (
            "integer above Int64",
            "{\"type\":\"error\",\"error\":{\"domain\":\"d\",\"code\":18446744073709551615,\"message\":\"m\"}}",
            "line 1, column 46, error.code: the number 18446744073709551615 is too large"
        ),
        (
            "deep nesting",
            "{\"type\":\"onboarding_loaded\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3},\"x\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
            "line 1, column 147: nested deeper than 32 levels"
        ),

        (
            "error inside a wrapped message",
            "{\"ts\":null,\"event\":{\"type\":\"onboarding_loaded\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":\"2\",\"total_screens\":3}}}",
            "line 1, column 110, event.meta.screen_index: expected an integer, found the string \"2\""
        ),
        (
            "bridge analytics name not a string",
            "{\"id\":\"onboarding_on_analytics_action\",\"meta\":{\"onboarding_id\":\"o1\",\"screen_cid\":\"s1\",\"screen_index\":1,\"total_screens\":3},\"event\":{\"name\":7}}",
            "line 1, column 139, event.name: expected a string, found the number 7"
        ),
    ]

    @Test func everyCase() throws {
        #expect(Self.cases.count >= 30)
        let reader = try EventReader()
        for (name, line, expected) in Self.cases {
            #expect(throws: JSONReadError.self, "\(name)") { try reader.read(line, arrival: arrival) }
            do { _ = try reader.read(line, arrival: arrival) } catch {
                #expect(error.description == expected, "\(name)")
            }
        }
    }

    /// Byte-level cases that a Swift string literal cannot hold, and cases that need a line number or limits.
    @Test func invalidUTF8() throws {
        let reader = try EventReader()
        var bytes = Array(#"{"type":"custom","action_id":"ab"#.utf8)
        bytes += [0xC3, 0x28]  // a two-byte lead followed by ASCII
        bytes += Array(#"","meta":\#(metaJSON)}"#.utf8)
        let error = try #require(
            bytes.withUnsafeBytes { b in
                Result { () throws(JSONReadError) -> Event in try reader.read(line: b, lineNumber: 7, arrival: arrival)
                }.failure
            })
        #expect(error.description == "line 7, column 33: invalid UTF-8")
        #expect(error.code == .syntax)
    }

    @Test func bomAfterLineOne() throws {
        let reader = try EventReader()
        let line = "\u{FEFF}{\"type\":\"onboarding_loaded\",\"meta\":\(metaJSON)}"
        #expect(throws: JSONReadError.self) { try reader.read(line, lineNumber: 2, arrival: arrival) }
        do { _ = try reader.read(line, lineNumber: 2, arrival: arrival) } catch {
            #expect(error.description == "line 2, column 1: a byte-order mark is allowed only at the start of line 1")
        }
    }

    @Test func limits() throws {
        let reader = try EventReader(
            limits: JSONReaderLimits(maxLineBytes: 300, maxStringBytes: 20, maxDepth: 4, maxChoices: 2))
        func message(_ line: String) -> String {
            do { _ = try reader.read(line, lineNumber: 3, arrival: arrival); return "accepted" } catch {
                return error.description
            }
        }
        #expect(
            message(#"{"type":"custom","action_id":"\#(String(repeating: "x", count: 21))","meta":\#(metaJSON)}"#)
                == "line 3, column 30, action_id: a string is longer than 20 bytes")
        #expect(
            message(#"{"type":"custom","action_id":"\#(String(repeating: "x", count: 20))","meta":\#(metaJSON)}"#)
                == "accepted")
        #expect(
            message(#"{"type":"custom","\#(String(repeating: "k", count: 21))":1,"action_id":"x","meta":\#(metaJSON)}"#)
                == "line 3, column 18: a key is longer than 20 bytes")
        // The key path of a nested string, and of a string in an array.
        #expect(
            message(
                #"{"type":"custom","action_id":"x","meta":{"onboarding_id":"\#(String(repeating: "o", count: 21))","screen_cid":"s","screen_index":1,"total_screens":3}}"#
            )
                == "line 3, column 58, meta.onboarding_id: a string is longer than 20 bytes")
        #expect(
            message(
                #"{"type":"custom","action_id":"x","x":["a",{"\#(String(repeating: "k", count: 21))":1}],"meta":\#(metaJSON)}"#
            )
                == "line 3, column 44, x[1]: a key is longer than 20 bytes")
        #expect(message(String(repeating: " ", count: 301)) == "line 3: line is 301 bytes long; the limit is 300")
        #expect(
            message(#"{"type":"onboarding_loaded","meta":\#(metaJSON),"x":[[[[1]]]]}"#)
                == "line 3, column 119: nested deeper than 4 levels")
        #expect(message(#"{"type":"onboarding_loaded","meta":\#(metaJSON),"x":[[[1]]]}"#) == "accepted")
        #expect(message(#"{"type":"onboarding_loaded","meta":\#(metaJSON),"x":[[1]]}"#) == "accepted")
        let three =
            #"[{"id":"a","value":"b","label":"c"},{"id":"a","value":"b","label":"c"},{"id":"a","value":"b","label":"c"}]"#
        #expect(
            message(
                #"{"type":"state_updated","element_id":"e","element_type":"multi_select","value":\#(three),"meta":\#(metaJSON)}"#
            )
                == "line 3, column 151: more than 2 multi-select elements")
        #expect(
            message(
                #"{"type":"state_updated","element_id":"e","element_type":"multi_select","value":[{"id":"a","id":"b"}],"meta":\#(metaJSON)}"#
            )
                == "line 3, column 91: duplicate key \"id\" in a multi-select element")
    }
}
