import BoardwalkGenerator
import BoardwalkModel
import Testing

@testable import BoardwalkCodec

/// `RecordFields`, the cheap path beside `RecordView`: equal values on whatever the full view accepts, and
/// errors (never a trap) on truncated or damaged bytes in the fields it reads.
@Suite struct RecordFieldsTests {
    /// One encoded body with the key's fields and the number of strings its references may use.
    struct Body {
        var event: Event
        var bytes: [UInt8]
        var header: RecordHeader
        var limit: StringID
    }

    static func bodies(seed: UInt64, count: Int) throws -> [Body] {
        var generator = RandomEvents(seed: seed)
        var out: [Body] = []
        for _ in 0..<count {
            let event = generator.event()
            var strings = StringTable()
            var encoder = RecordEncoder()
            let header = try encoder.appendBody(event, strings: &strings).header
            out.append(Body(event: event, bytes: encoder.bytes, header: header, limit: StringID(strings.count)))
        }
        return out
    }

    static func fields(_ b: Body, _ bytes: [UInt8]? = nil, extent: RecordFields.Extent = .all) -> Result<
        RecordFields, CodecError
    > {
        (bytes ?? b.bytes).withUnsafeBytes { raw in
            do throws(CodecError) {
                return .success(try RecordFields(body: raw, header: b.header, stringLimit: b.limit, extent: extent))
            } catch {
                return .failure(error)
            }
        }
    }

    /// The values both types expose, read through the full view (nil when it rejects the bytes).
    static func viewValues(_ b: Body, _ bytes: [UInt8]) -> [String]? {
        bytes.withUnsafeBytes { raw -> [String]? in
            guard let v = try? RecordView(body: raw, header: b.header, stringLimit: b.limit) else { return nil }
            return [
                "\(v.kind)", "\(v.time)", "\(v.hasMeta)", "\(v.onboarding as Any)", "\(v.screenIndex as Any)",
                "\(v.totalScreens as Any)", "\(v.session as Any)", "\(v.profile as Any)", "\(v.placement as Any)",
                "\(v.variation as Any)", "\(v.analyticsName as Any)", "\(v.knownAnalyticsName as Any)",
                "\(v.elementID as Any)", "\(v.reply as Any)", "\(v.actionID as Any)", "\(v.elementType as Any)",
            ]
        }
    }

    static func values(_ f: RecordFields) -> [String] {
        [
            "\(f.kind)", "\(f.time)", "\(f.hasMeta)", "\(f.onboarding as Any)", "\(f.screenIndex as Any)",
            "\(f.totalScreens as Any)", "\(f.session as Any)", "\(f.profile as Any)", "\(f.placement as Any)",
            "\(f.variation as Any)", "\(f.analyticsName as Any)", "\(f.knownAnalyticsName as Any)",
            "\(f.elementID as Any)", "\(f.reply as Any)", "\(f.actionID as Any)", "\(f.elementType as Any)",
        ]
    }

    @Test func valuesEqualTheFullViewsOnRandomEvents() throws {
        for b in try Self.bodies(seed: 11, count: 3000) {
            let expected = try #require(Self.viewValues(b, b.bytes))
            let all = try Self.fields(b).get()
            #expect(Self.values(all) == expected, "\(b.event)")
            // Up to the session: the same position fields, and nothing after the session.
            let lean = try Self.fields(b, extent: .session).get()
            #expect(Array(Self.values(lean)[0..<7]) == Array(expected[0..<7]), "\(b.event)")
            #expect(lean.profile == nil && lean.placement == nil && lean.variation == nil)
            #expect(lean.analyticsName == nil && lean.knownAnalyticsName == nil && lean.elementID == nil)
            #expect(lean.actionID == nil && lean.elementType == nil && lean.reply == nil)
        }
    }

    /// A prefix of a body either fails with an error inside the prefix, or parses to the full body's values
    /// (the fields it reads were all there).
    @Test func truncatedBodiesFailOrGiveTheSameValues() throws {
        for b in try Self.bodies(seed: 12, count: 400) {
            let expected = try #require(Self.viewValues(b, b.bytes))
            for n in 0..<b.bytes.count {
                let prefix = Array(b.bytes[0..<n])
                for extent in [RecordFields.Extent.all, .session] {
                    switch Self.fields(b, prefix, extent: extent) {
                    case .failure(let error):
                        #expect(error.offset <= n, "prefix \(n) of \(b.event): \(error)")
                    case .success(let f):
                        let got = Self.values(f)
                        if extent == .all {
                            #expect(got == expected, "prefix \(n) of \(b.event)")
                        } else {
                            #expect(Array(got[0..<7]) == Array(expected[0..<7]), "prefix \(n) of \(b.event)")
                        }
                    }
                }
            }
        }
    }

    /// When the last byte of a body is a field `RecordFields` reads (a known analytics name without element or
    /// reply, an action id, a session without anything after it), every proper prefix fails.
    @Test func everyProperPrefixFailsWhenTheLastByteIsRead() throws {
        let t = Timestamp(microseconds: 1_793_527_200_123_456)
        let meta = Meta(onboardingID: "onb", screenClientID: "goal", screenIndex: 2, totalScreens: 8)
        let cases: [(Event, RecordFields.Extent)] = [
            (
                Event(
                    time: t, session: "s", profile: "p", placement: "main", variation: "b", meta: meta,
                    payload: .analytics(.screenPresented)), .all
            ),
            (Event(time: t, session: "s", meta: meta, payload: .openPaywall(actionID: "buy")), .all),
            (Event(time: t, session: "s", meta: meta, payload: .onboardingLoaded), .session),
        ]
        for (event, extent) in cases {
            var strings = StringTable()
            var encoder = RecordEncoder()
            let header = try encoder.appendBody(event, strings: &strings).header
            let b = Body(event: event, bytes: encoder.bytes, header: header, limit: StringID(strings.count))
            #expect((try? Self.fields(b, extent: extent).get()) != nil)
            for n in 0..<b.bytes.count {
                guard case .failure(let error) = Self.fields(b, Array(b.bytes[0..<n]), extent: extent) else {
                    Issue.record("prefix \(n) of \(event) parsed")
                    continue
                }
                #expect(error.reason == .truncated && error.offset <= n, "prefix \(n): \(error)")
            }
        }
    }

    /// Every single-bit flip: no trap; any error points inside the body; whatever the full view accepts gives
    /// the same values.
    @Test func bitFlipsNeverTrap() throws {
        for b in try Self.bodies(seed: 13, count: 150) {
            var flipped = b.bytes
            for bit in 0..<(flipped.count * 8) {
                flipped[bit / 8] ^= 1 << (bit % 8)
                let expected = Self.viewValues(b, flipped)
                switch Self.fields(b, flipped) {
                case .failure(let error):
                    #expect(error.offset <= flipped.count)
                    #expect(
                        expected == nil, "bit \(bit) of \(b.event): the full view accepts what RecordFields rejects")
                case .success(let f):
                    if let expected { #expect(Self.values(f) == expected, "bit \(bit) of \(b.event)") }
                }
                flipped[bit / 8] ^= 1 << (bit % 8)
            }
        }
    }

    /// A body's kind code (what a store block counts it under) is its kind and, for analytics, its name code (and
    /// an unknown name's reference), as the full view reads them; flipped bits and truncations give some code, never
    /// a trap.
    @Test func kindCodesAreTheKindAndNameOfTheRecord() throws {
        func code(_ bytes: [UInt8]) -> UInt8 { bytes.withUnsafeBytes { RecordFormat.kindCode(body: $0).code } }
        var analyticsCodes = Set<UInt8>()
        for b in try Self.bodies(seed: 21, count: 400) {
            let view = try b.bytes.withUnsafeBytes { try RecordView(body: $0, header: b.header, stringLimit: b.limit) }
            let expected: (code: UInt8, name: StringID)
            switch view.analyticsName {
            case .known(let name)?: expected = (name.code, RecordFormat.absent)
            case .unknown(let ref)?: expected = (15, ref)
            case nil: expected = (view.kind.code << 4, RecordFormat.absent)
            }
            let got = b.bytes.withUnsafeBytes { RecordFormat.kindCode(body: $0) }
            #expect(got == expected, "\(b.event)")
            if view.kind == .analytics { analyticsCodes.insert(expected.code) }
            var flipped = b.bytes
            for bit in 0..<(flipped.count * 8) {
                flipped[bit / 8] ^= 1 << (bit % 8)
                _ = code(flipped)
                flipped[bit / 8] ^= 1 << (bit % 8)
            }
            for n in 0..<b.bytes.count { _ = code(Array(b.bytes[0..<n])) }
        }
        #expect(analyticsCodes.count >= 5 && analyticsCodes.contains(15))
        #expect(code([]) == RecordFormat.unclassifiedKindCode)
        #expect(code([0x27]) == RecordFormat.unclassifiedKindCode)  // kind 7
        #expect(code([0x40]) == RecordFormat.unclassifiedKindCode)  // version 2
        #expect(code([0x20, 0x00]) == RecordFormat.unclassifiedKindCode)  // analytics, no name byte
        #expect(code([0x20, 0x00, 0x08]) == RecordFormat.unclassifiedKindCode)  // name code 8
    }

    /// The errors of the fields it reads are the full view's: same offset, same reason.
    @Test func errorsInTheFieldsItReadsAreTheFullViews() throws {
        let t = Timestamp(microseconds: 1_793_527_200_123_456)
        let meta = Meta(onboardingID: "onb", screenClientID: "goal", screenIndex: 2, totalScreens: 8)
        let event = Event(time: t, session: "s", profile: "p", meta: meta, payload: .analytics(.screenPresented))
        var strings = StringTable()
        var encoder = RecordEncoder()
        let header = try encoder.appendBody(event, strings: &strings).header
        let b = Body(event: event, bytes: encoder.bytes, header: header, limit: StringID(strings.count))
        func viewError(_ bytes: [UInt8], header: RecordHeader, limit: StringID) -> CodecError? {
            bytes.withUnsafeBytes { raw in
                do throws(CodecError) {
                    _ = try RecordView(body: raw, header: header, stringLimit: limit)
                    return nil
                } catch {
                    return error
                }
            }
        }
        func fieldsError(_ bytes: [UInt8], header: RecordHeader, limit: StringID) -> CodecError? {
            let c = Body(event: event, bytes: bytes, header: header, limit: limit)
            if case .failure(let e) = Self.fields(c) { return e }
            return nil
        }
        var cases: [([UInt8], RecordHeader, StringID)] = []
        var v2 = b.bytes
        v2[0] = 2 << 5  // version 2
        cases.append((v2, header, b.limit))
        var kind = b.bytes
        kind[0] = 1 << 5 | 9  // unknown kind
        cases.append((kind, header, b.limit))
        var flags = b.bytes
        flags[1] |= 0x80  // flags continue into a reserved bit
        cases.insert((Array(flags[0..<2]) + [0x01] + Array(flags[2...]), header, b.limit), at: 0)
        cases.append((b.bytes, RecordHeader(time: t, onboarding: nil, screenIndex: nil), b.limit))  // meta disagrees
        cases.append((b.bytes, header, 2))  // references out of range
        // screen 65 535
        cases.append((b.bytes, RecordHeader(time: t, onboarding: 0, screenIndex: UInt16.max), b.limit))
        var name = b.bytes
        name[name.count - 1] = 0x09  // analytics name code 9
        cases.append((name, header, b.limit))
        for (i, (bytes, h, limit)) in cases.enumerated() {
            let expected = viewError(bytes, header: h, limit: limit)
            #expect(expected != nil, "case \(i)")
            #expect(fieldsError(bytes, header: h, limit: limit) == expected, "case \(i)")
        }
    }
}

/// The varint reader's wide path (8 bytes readable) against the byte-by-byte path (fewer): same values, same
/// errors at the same offsets.
@Suite struct VarintPathTests {
    static func read(_ bytes: [UInt8], padding: Int) -> Result<(UInt64, Int), CodecError> {
        let padded = bytes + [UInt8](repeating: 0x01, count: padding)
        return padded.withUnsafeBytes { raw in
            var r = ByteReader(base: raw.baseAddress!, position: 0, end: raw.count)
            do throws(CodecError) {
                let v = try r.varint()
                return .success((v, r.position))
            } catch {
                return .failure(error)
            }
        }
    }

    static func encode(_ v: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        var x = v
        while x >= 0x80 {
            out.append(UInt8(x & 0x7F) | 0x80)
            x >>= 7
        }
        out.append(UInt8(x))
        return out
    }

    @Test func everyLengthDecodesAlikeOnBothPaths() {
        var values: [UInt64] = [0, 1, 127, 128, 16_383, 16_384, UInt64.max, UInt64.max >> 1, 1 << 56, (1 << 56) - 1]
        var rng = SplitMix64(seed: 5)
        for bits in 1...64 {
            for _ in 0..<20 { values.append(rng.next() >> UInt64(64 - bits)) }
        }
        for v in values {
            let bytes = Self.encode(v)
            for padding in [0, 3, 7, 8, 16] {
                guard case .success(let (got, position)) = Self.read(bytes, padding: padding) else {
                    Issue.record("\(v) with \(padding) bytes after it failed")
                    continue
                }
                #expect(got == v && position == bytes.count, "\(v), padding \(padding)")
            }
        }
    }

    @Test func malformedVarintsFailAlikeOnBothPaths() {
        let cases: [[UInt8]] = [
            [0x80, 0x00], [0xFF, 0x80, 0x00], [0x81, 0x80, 0x80, 0x00],  // non-canonical
            [UInt8](repeating: 0xFF, count: 9) + [0x02],  // 64-bit overflow
            [UInt8](repeating: 0xFF, count: 11),  // too long
            [0x80], [0xFF, 0xFF, 0xFF],  // truncated (only without padding)
        ]
        for bytes in cases {
            var results: [String] = []
            for padding in [0, 2, 8, 16] {
                switch Self.read(bytes, padding: padding) {
                case .success(let (v, p)):
                    // Only a truncated varint may succeed, once padding completes it.
                    #expect(bytes.last! >= 0x80 && padding > 0, "\(bytes) + \(padding) decoded to \(v) at \(p)")
                case .failure(let e): results.append("\(e)")
                }
            }
            if bytes.last! < 0x80 || bytes.count > 10 {
                #expect(Set(results).count == 1 && results.count == 4, "\(bytes): \(results)")
            }
        }
    }
}
