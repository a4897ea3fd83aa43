import BoardwalkCodec
import BoardwalkGenerator
import BoardwalkModel
import Testing

/// The in-place entry points (`appendRecord(at:)`, `appendBody(at:eventID:)`, `StringInterner.intern(at:)`)
/// must write exactly the bytes and assign exactly the ids of the by-value ones.
@Suite struct InPlaceEncodingTests {
    /// An interner with only `intern(_:)`: the protocol's default `intern(at:)` loads the string.
    struct PlainInterner: StringInterner {
        var table = StringTable()
        var calls: [String] = []
        mutating func intern(_ string: String) throws -> StringID {
            calls.append(string)
            return table.intern(string)
        }
    }

    @Test(arguments: [UInt64(5), 77, 0xC0FFEE])
    func pointerEntryPointsMatchByValue(seed: UInt64) throws {
        var generator = RandomEvents(seed: seed)
        let events = (0..<2000).map { _ in generator.event() }
        var byValue = RecordEncoder()
        var valueStrings = StringTable()
        var inPlace = RecordEncoder()
        var placeStrings = StringTable()
        var plain = RecordEncoder()
        var plainStrings = PlainInterner()
        try events.withUnsafeBufferPointer { buffer in
            for i in buffer.indices {
                let a = try byValue.appendRecord(buffer[i], strings: &valueStrings)
                let b = try inPlace.appendRecord(at: buffer.baseAddress! + i, strings: &placeStrings)
                let c = try plain.appendRecord(at: buffer.baseAddress! + i, strings: &plainStrings)
                #expect(a == b)
                #expect(a == c)
            }
        }
        #expect(byValue.bytes == inPlace.bytes)
        #expect(byValue.bytes == plain.bytes)
        #expect(valueStrings.strings == placeStrings.strings)
        #expect(valueStrings.strings == plainStrings.table.strings)
        // `appendRecord(_:)` now runs the in-place code too, so the comparisons above only pin the plain
        // interner's path against the cached one; what the in-place encoder wrote must also decode to the
        // very events it read.
        let bytes = Array(inPlace.bytes)
        try bytes.withUnsafeBytes { raw in
            var offset = 0
            for event in events {
                let view = try RecordView(record: raw, at: offset, stringLimit: StringID(placeStrings.count))
                #expect(try view.event(strings: placeStrings.strings) == event)
                offset += view.byteCount
            }
            #expect(offset == raw.count)
        }
    }

    /// The in-place reads rebind an `Optional` payload's memory to the wrapped type; that is only sound
    /// while the optional adds no bytes of its own (a present value sits unchanged at offset 0).
    @Test func optionalPayloadsShareTheirLayout() {
        #expect(MemoryLayout<String?>.size == MemoryLayout<String>.size)
        #expect(MemoryLayout<String?>.stride == MemoryLayout<String>.stride)
        #expect(MemoryLayout<Meta?>.size == MemoryLayout<Meta>.size)
        #expect(MemoryLayout<Meta?>.stride == MemoryLayout<Meta>.stride)
    }

    /// A precomputed event id reference gives the bytes the encoder makes itself, for UUID ids (either
    /// case) and other ids.
    @Test func precomputedEventIDMatches() throws {
        let ids = [
            "6f1c2d3e-4a5b-4c6d-8e7f-0123456789ab", "6F1C2D3E-4A5B-4C6D-8E7F-0123456789AB", "retry-17",
            "6f1c2d3e-4a5b-4c6d-8e7f-0123456789aB",
        ]
        for id in ids {
            let event = Event(
                time: Timestamp(microseconds: 1_700_000_000_000_000), session: "s", profile: "p", eventID: id,
                meta: Meta(onboardingID: "o", screenClientID: "welcome", screenIndex: 2, totalScreens: 5),
                payload: .analytics(.screenPresented))
            var own = RecordEncoder()
            var ownStrings = StringTable()
            var given = RecordEncoder()
            var givenStrings = StringTable()
            let ref = try EventIDRef(interning: id, strings: &givenStrings)
            // The same dictionary state as the caller that made `ref` (a non-UUID id is interned first).
            _ = try EventIDRef(interning: id, strings: &ownStrings)
            let a = try withUnsafePointer(to: event) { try own.appendBody(at: $0, strings: &ownStrings) }
            let b = try withUnsafePointer(to: event) {
                try given.appendBody(at: $0, strings: &givenStrings, eventID: ref)
            }
            #expect(a == b, "\(id)")
            #expect(own.bytes == given.bytes, "\(id)")
            try given.withUnsafeBytes { raw in
                let view = try RecordView(body: raw, header: b.header)
                #expect(try view.event(strings: givenStrings) == event)
            }
        }
    }

    /// The identity cache answers only for a representation it holds; an equal string in other storage
    /// gets the same id through the slow path.
    @Test func cachedIDReadsTheRepresentation() {
        var table = StringTable()
        var long = "a string longer than fifteen bytes, so it lives on the heap"
        var other = String(long.utf8.reversed().reversed().map { Character(Unicode.Scalar($0)) })
        #expect(other == long)
        #expect(withUnsafePointer(to: &long) { table.cachedID(at: $0) } == nil)
        let id = withUnsafePointer(to: &long) { table.intern(at: $0) }
        #expect(withUnsafePointer(to: &long) { table.cachedID(at: $0) } == id)
        #expect(withUnsafePointer(to: &other) { table.intern(at: $0) } == id)
        var short = "screen_1"
        let shortID = withUnsafePointer(to: &short) { table.intern(at: $0) }
        #expect(shortID == id + 1)
        #expect(table.intern("screen_1") == shortID)
        #expect(table.count == 2)
    }
}
