import BoardwalkJSON
import BoardwalkModel
import Testing

/// Strings without escapes are read in place from the line, escaped ones through simdjson's unescaping; both
/// must give the same text whatever the whitespace around them and wherever a backslash falls relative to
/// the 32-byte blocks the scan reads.
@Suite struct InPlaceStringTests {
    static func close(_ actionJSON: String, separator: String = "") -> String {
        #"{"type":"close","action_id":\#(actionJSON)\#(separator),"meta":\#(metaJSON)}"#
    }

    /// The JSON string literal of `text` with `"` and `\` escaped, and every other byte as is.
    static func literal(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    @Test(arguments: [0, 1, 15, 16, 30, 31, 32, 33, 36, 63, 64, 65, 100])
    func plainAndEscapedAgree(length: Int) throws {
        let plain = String(repeating: "x", count: length)
        for separator in ["", " ", " \t ", "\r\n "] {
            let event = try readOne(Self.close(Self.literal(plain), separator: separator)).get()
            #expect(event.payload == .close(actionID: plain))
        }
        // A backslash (escaped) at each position, including the first and last byte of a 32-byte block.
        for at in stride(from: 0, through: length, by: max(1, length / 7)) {
            var chars = Array(plain)
            chars.insert("\\", at: min(at, chars.count))
            let text = String(chars)
            let event = try readOne(Self.close(Self.literal(text), separator: " ")).get()
            #expect(event.payload == .close(actionID: text))
        }
    }

    @Test func unicodeEscapesAndRawUTF8() throws {
        let escaped = try readOne(Self.close(#""caf\u00e9 \ud83d\ude00""#)).get()
        #expect(escaped.payload == .close(actionID: "café 😀"))
        let raw = try readOne(Self.close("\"café 😀\"")).get()
        #expect(raw.payload == .close(actionID: "café 😀"))
    }

    @Test func pointsStayValidAcrossLinesOfOneBuffer() throws {
        // Lines parsed in place in one buffer, the last one within 64 bytes of its end (copied to scratch).
        let ids = ["first-id", String(repeating: "y", count: 40), "a\\\"b", "last"]
        let text = ids.map { Self.close(Self.literal($0)) + "\n" }.joined()
        let reader = try EventReader()
        var got: [String] = []
        _ = Array(text.utf8).withUnsafeBytes { buffer in
            reader.readLines(in: buffer, arrival: arrival) { _, result in
                if case .success(let event) = result, case .close(let id) = event.payload { got.append(id) }
            }
        }
        #expect(got == ids)
    }
}
