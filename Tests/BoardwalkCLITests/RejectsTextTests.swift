import Testing

@testable import BoardwalkCLI

// The rejects file's copy of a line is made on bytes (built a `Character` at a time, it was 70 % of ingesting a
// 100 000-line CSV given to `ingest`); these tests pin that it is the text of the straightforward definition: the
// first 1 000 bytes, invalid UTF-8 repaired, C0 controls and DEL as U+FFFD.

@Suite("The rejected line as the rejects file shows it")
struct RejectsTextTests {
    /// The straightforward definition, a `Character` at a time: the reference.
    static func reference(_ bytes: [UInt8]) -> String {
        let decoded = String(decoding: bytes.prefix(1000), as: UTF8.self)
        return String(decoded.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "\u{FFFD}" : Character($0) })
    }

    static func shown(_ bytes: [UInt8]) -> String { bytes.withUnsafeBytes { RejectsWriter.shown($0) } }

    @Test(
        "named cases",
        arguments: [
            Array("plain {\"type\":\"x\"}".utf8), Array("tab\there\r\u{1B}[2J\u{7F}".utf8),
            [0xFF, 0xFE, 0x7B, 0x00, 0x22],
            Array("é中文👨‍👩‍👧".utf8), [0xC3], [0xE4, 0xB8], [0xC3, 0x0A, 0xA9],
            Array(repeating: 0x61, count: 999) + Array("é".utf8),
            Array(repeating: 0x61, count: 2_000), [],
        ])
    func named(bytes: [UInt8]) {
        #expect(Self.shown(bytes) == Self.reference(bytes))
    }

    @Test("random bytes, weighted toward ASCII, controls and UTF-8 lead and continuation bytes")
    func random() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        let palette: [UInt8] = [
            0x00, 0x09, 0x0A, 0x1B, 0x7F, 0x41, 0x22, 0xC3, 0xA9, 0xE4, 0xB8, 0xAD, 0xF0, 0x9F, 0x80, 0xBF, 0xFF,
        ]
        for _ in 0..<300 {
            let count = Int(next() % 1_100)
            let bytes = (0..<count).map { _ in
                let r = next()
                return r % 3 == 0 ? UInt8(truncatingIfNeeded: r >> 8) : palette[Int((r >> 8) % UInt64(palette.count))]
            }
            #expect(Self.shown(bytes) == Self.reference(bytes), "\(bytes)")
        }
    }
}
