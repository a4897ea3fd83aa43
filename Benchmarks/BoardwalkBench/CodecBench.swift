// Boardwalk's codec: event → record (encode) and record → event (owned decode and the borrowed view),
// over the JSON benchmarks' events, several passes per run so a run lasts long enough to time.
import BoardwalkCodec
import BoardwalkModel

/// Full, self-contained records of `events`, back to back, and the string table they refer to.
struct EncodedEvents {
    var bytes: [UInt8]
    var strings: StringTable
    var count: Int

    init(_ events: [Event]) throws {
        var encoder = RecordEncoder(capacity: events.count * 64)
        var table = StringTable()
        for e in events { _ = try encoder.appendRecord(e, strings: &table) }
        bytes = Array(encoder.bytes)
        strings = table
        count = events.count
    }
}

/// Event → full record into a reusable buffer, with a warm string table (as the store's interner is
/// once it has seen an onboarding's strings).
final class CodecEncodeBench: Benchmark {
    let input: () -> [Event]
    let passes: Int
    private var events: [Event] = []
    private var encoder = RecordEncoder()
    private var strings = StringTable()
    private(set) var inputBytes: Int?

    init(passes: Int, input: @escaping () -> [Event]) {
        self.passes = passes
        self.input = input
    }

    func setUp() throws {
        events = input()
        for e in events { _ = try encoder.appendRecord(e, strings: &strings) }
        inputBytes = encoder.count * passes
        encoder.removeAll()
    }

    func run() throws -> UInt64 {
        // In place, as the store encodes: `for e in events` would copy each event (a retain and release
        // per string) before the call, and the class's stored properties would pay a dynamic exclusivity
        // check per access; neither is the encoder's work.
        var encoder = self.encoder
        var strings = self.strings
        self.encoder = RecordEncoder(capacity: 0)
        defer {
            self.encoder = encoder
            self.strings = strings
        }
        var sum: UInt64 = 0
        try events.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            for _ in 0..<passes {
                encoder.removeAll()
                for i in 0..<buffer.count { _ = try encoder.appendRecord(at: base + i, strings: &strings) }
                sum &+= UInt64(encoder.count)
            }
        }
        return sum
    }

    func tearDown() throws { events = [] }
}

/// Record → owned `Event`, strings resolved through an array (a retain per string field).
final class CodecDecodeOwnedBench: Benchmark {
    let input: () throws -> EncodedEvents
    let passes: Int
    private var encoded: EncodedEvents?
    private(set) var inputBytes: Int?

    init(passes: Int, input: @escaping () throws -> EncodedEvents) {
        self.passes = passes
        self.input = input
    }

    func setUp() throws {
        encoded = try input()
        inputBytes = encoded!.bytes.count * passes
    }

    func run() throws -> UInt64 {
        let encoded = encoded!
        let strings = encoded.strings.strings
        var sum: UInt64 = 0
        try encoded.bytes.withUnsafeBytes { raw in
            for _ in 0..<passes {
                var offset = 0
                while offset < raw.count {
                    let view = try RecordView(record: raw, at: offset)
                    let event = try view.event(strings: strings)
                    sum &+= UInt64(bitPattern: event.time.microseconds) &+ UInt64(event.meta?.screenIndex ?? 0)
                    offset += view.byteCount
                }
            }
        }
        return sum
    }

    func tearDown() throws { encoded = nil }
}

/// Record → borrowed, validated view (no allocation); reads the fields a scan filters on.
final class CodecDecodeBorrowedBench: Benchmark {
    let input: () throws -> EncodedEvents
    let passes: Int
    private var encoded: EncodedEvents?
    private(set) var inputBytes: Int?

    init(passes: Int, input: @escaping () throws -> EncodedEvents) {
        self.passes = passes
        self.input = input
    }

    func setUp() throws {
        encoded = try input()
        inputBytes = encoded!.bytes.count * passes
    }

    func run() throws -> UInt64 {
        var sum: UInt64 = 0
        try encoded!.bytes.withUnsafeBytes { raw in
            for _ in 0..<passes {
                var offset = 0
                while offset < raw.count {
                    let view = try RecordView(record: raw, at: offset)
                    sum &+= UInt64(bitPattern: view.time.microseconds) &+ UInt64(view.screenIndex ?? 0)
                    sum &+= UInt64(view.session ?? 0) &+ UInt64(view.knownAnalyticsName == .screenPresented ? 1 : 0)
                    offset += view.byteCount
                }
            }
        }
        return sum
    }

    func extraFigures() -> [Figure] {
        guard let encoded, encoded.count > 0 else { return [] }
        return [
            Figure(
                name: "record bytes per event (full record, length prefix included)",
                value: Double(encoded.bytes.count) / Double(encoded.count), unit: "B")
        ]
    }

    func tearDown() throws { encoded = nil }
}
