import BoardwalkCodec
import BoardwalkModel
import Testing

/// Decodes a full record that must fill `bytes`, returning the error (or nil on success).
private func recordError(_ bytes: [UInt8], stringLimit: StringID = RecordFormat.absent) -> CodecError? {
    bytes.withUnsafeBytes { raw in
        do throws(CodecError) {
            let view = try RecordView(record: raw, at: 0, stringLimit: stringLimit)
            return view.byteCount == raw.count ? nil : CodecError(offset: view.byteCount, reason: .trailingBytes)
        } catch {
            return error
        }
    }
}

private func bodyError(_ bytes: [UInt8], header: RecordHeader) -> CodecError? {
    bytes.withUnsafeBytes { raw in
        do throws(CodecError) {
            _ = try RecordView(body: raw, header: header)
            return nil
        } catch {
            return error
        }
    }
}

private func batchError(_ bytes: [UInt8]) -> CodecError? {
    do {
        _ = try BatchReader.events(in: bytes)
        return nil
    } catch {
        return error
    }
}

@Suite struct TruncationTests {
    /// A full record carries its length, so every proper prefix fails (mostly as truncated).
    @Test(arguments: Golden.all)
    func everyTruncatedRecordFails(golden: Golden) {
        let bytes = Hex.decode(golden.record)
        for n in 0..<bytes.count {
            let error = recordError(Array(bytes[0..<n]))
            #expect(error?.reason == .truncated, "prefix of \(n) bytes")
            #expect(error.map { $0.offset <= n } == true)
        }
    }

    /// A body has no length, but its fields say how many bytes follow, so every proper prefix fails too:
    /// as truncated, or (a multi-select cut inside its choices) as a count the remaining bytes cannot hold.
    @Test(arguments: Golden.all)
    func everyTruncatedBodyFails(golden: Golden) throws {
        var strings = StringTable()
        var encoder = RecordEncoder()
        let header = try encoder.appendBody(golden.event, strings: &strings).header
        let bytes = Hex.decode(golden.body)
        for n in 0..<bytes.count {
            let reason = bodyError(Array(bytes[0..<n]), header: header)?.reason
            let expected: Bool
            switch reason {
            case .truncated?, .oversizedCount?: expected = true
            default: expected = false
            }
            #expect(expected, "prefix of \(n) bytes: \(String(describing: reason))")
        }
        #expect(bodyError(bytes, header: header) == nil)
    }

    @Test func everyTruncatedBatchFileFails() throws {
        var sessions = Sessions(seed: 11)
        var writer = BatchWriter(blockSize: 200)
        for event in sessions.events(30) { try writer.append(event) }
        let file = writer.finish()
        for n in 0..<file.count {
            #expect(batchError(Array(file[0..<n])) != nil, "prefix of \(n) bytes")
        }
    }
}

@Suite struct BitFlipTests {
    /// Every single-bit flip anywhere in a batch file is detected: by the magic, the version, the zero
    /// bytes of the header, or a block's CRC32C.
    @Test func everyBitFlipInABatchFileFails() throws {
        var sessions = Sessions(seed: 5)
        var writer = BatchWriter(blockSize: 300)
        for event in sessions.events(25) { try writer.append(event) }
        let file = writer.finish()
        #expect(try BatchReader.events(in: file).count == 25)
        var undetected: [Int] = []
        var flipped = file
        for bit in 0..<(file.count * 8) {
            flipped[bit / 8] ^= 1 << (bit % 8)
            if batchError(flipped) == nil { undetected.append(bit) }
            flipped[bit / 8] ^= 1 << (bit % 8)
        }
        #expect(undetected == [])
    }

    /// A bare record has no checksum: a flipped bit may make another valid record. It must never trap or
    /// read outside the record, and whatever decodes must re-encode to exactly the flipped bytes.
    @Test(arguments: Golden.all)
    func bitFlipsInARecordNeverTrap(golden: Golden) throws {
        var strings = StringTable()
        var encoder = RecordEncoder()
        try encoder.appendRecord(golden.event, strings: &strings)
        let bytes = encoder.bytes
        var flipped = bytes
        for bit in 0..<(bytes.count * 8) {
            flipped[bit / 8] ^= 1 << (bit % 8)
            let event: Event? = flipped.withUnsafeBytes { raw in
                do throws(CodecError) {
                    let view = try RecordView(record: raw, stringLimit: StringID(strings.count))
                    _ = Array(view.choices)
                    return view.byteCount == raw.count ? try view.event(strings: strings) : nil
                } catch {
                    return nil
                }
            }
            if let event, event.eventID == nil || event.eventID == golden.event.eventID {
                var again = RecordEncoder()
                var table = strings
                try again.appendRecord(event, strings: &table)
                #expect(again.bytes == flipped, "bit \(bit) decoded to \(event)")
            }
            flipped[bit / 8] ^= 1 << (bit % 8)
        }
    }
}

@Suite struct ErrorReasonTests {
    // "analytics screen_presented": 10 | 20 | 41 | time(8) | 00 02 01 10 | 02 | 01
    static let valid = Hex.decode("102041408aa817345f0600000201100201")

    static func patched(_ at: Int, _ byte: UInt8) -> [UInt8] {
        var b = valid
        b[at] = byte
        return b
    }

    @Test func validBaseline() {
        #expect(recordError(Self.valid) == nil)
    }

    @Test func truncatedEmpty() {
        #expect(recordError([]) == CodecError(offset: 0, reason: .truncated))
    }

    @Test func unsupportedVersions() {
        #expect(recordError(Self.patched(1, 0x40)) == CodecError(offset: 1, reason: .unsupportedVersion(2)))
        #expect(recordError(Self.patched(1, 0x00)) == CodecError(offset: 1, reason: .unsupportedVersion(0)))
        #expect(recordError(Self.patched(1, 0xE0)) == CodecError(offset: 1, reason: .unsupportedVersion(7)))
    }

    @Test func unknownKindIsSkippableByLength() throws {
        let bytes = Self.patched(1, 0x27) + Self.valid
        #expect(recordError(Array(bytes[0..<Self.valid.count])) == CodecError(offset: 1, reason: .unknownKind(7)))
        // A reader that meets an unknown kind skips it by its length and carries on.
        try bytes.withUnsafeBytes { raw in
            let extent = try RecordView.extent(ofRecordIn: raw, at: 0)
            #expect(extent == 0..<Self.valid.count)
            let next = try RecordView(record: raw, at: extent.upperBound)
            #expect(next.knownAnalyticsName == .screenPresented)
        }
    }

    @Test func varintOverflowAndNonCanonical() {
        // A length prefix of eleven continuation bytes overflows 64 bits.
        #expect(recordError([UInt8](repeating: 0xFF, count: 11)) == CodecError(offset: 0, reason: .varintOverflow))
        // A 10-byte varint whose last byte is above 1 does too.
        #expect(
            recordError([UInt8](repeating: 0xFF, count: 9) + [0x02]) == CodecError(offset: 0, reason: .varintOverflow))
        // A string reference of 2^32 does not fit 32 bits.
        var big = Self.valid
        big.replaceSubrange(11...11, with: [0x80, 0x80, 0x80, 0x80, 0x10])
        big[0] = UInt8(big.count - 1)
        #expect(recordError(big) == CodecError(offset: 11, reason: .varintOverflow))
        // 0x80 0x00 spells zero in two bytes.
        #expect(recordError([0x80, 0x00]) == CodecError(offset: 0, reason: .nonCanonicalVarint))
    }

    @Test func stringReferencesOutOfRange() {
        // Onboarding ref 0 is fine with a limit of 3, but the session ref 2... is not with a limit of 2.
        #expect(
            recordError(Self.valid, stringLimit: 2)
                == CodecError(
                    offset: 15, reason: .stringReferenceOutOfRange(id: 2, count: 2)))
        // The reserved id is never valid.
        var reserved = Self.valid
        reserved.replaceSubrange(15...15, with: [0xFF, 0xFF, 0xFF, 0xFF, 0x0F])
        reserved[0] = UInt8(reserved.count - 1)
        #expect(
            recordError(reserved)
                == CodecError(
                    offset: 15, reason: .stringReferenceOutOfRange(id: .max, count: Int(UInt32.max))))
    }

    @Test func unresolvedStringNamesTheField() throws {
        let error = #expect(throws: CodecError.self) {
            try Self.valid.withUnsafeBytes { try Event(record: $0, strings: ["onboarding", "goal"]) }
        }
        #expect(error == CodecError(offset: 0, reason: .unresolvedString(id: 2, field: "session")))
    }

    @Test func oversizedCounts() {
        // A record length above the format's limit.
        #expect(
            recordError([0x80, 0x80, 0x80, 0x10])
                == CodecError(
                    offset: 0, reason: .oversizedCount(count: 1 << 25, limit: RecordFormat.maxRecordLength)))
        // A multi-select claiming 100 choices in 2 bytes.
        let multi = Hex.decode("122141408aa817345f06000002011002030164")
        #expect(recordError(multi) == CodecError(offset: 18, reason: .oversizedCount(count: 100, limit: 0)))
    }

    @Test func lengthMismatchAndTrailingBytes() {
        // Declares one byte more than the fields use: the extra byte is inside the record.
        var long = Self.valid + [0x00]
        long[0] += 1
        #expect(recordError(long) == CodecError(offset: 17, reason: .lengthMismatch(declared: 17, used: 16)))
        #expect(throws: CodecError(offset: 17, reason: .trailingBytes)) {
            try (Self.valid + [0]).withUnsafeBytes { try Event(record: $0, strings: ["a", "b", "c"]) }
        }
    }

    @Test func reservedBits() {
        // Flags with bit 7 set need a second varint byte: 0xC1 0x01 = 0xC1.
        var flags = Self.valid
        flags.replaceSubrange(2...2, with: [0xC1, 0x01])
        flags[0] += 1
        #expect(recordError(flags) == CodecError(offset: 2, reason: .reservedBits(field: "flags", value: 0xC1)))
        // Element/reply presence bits on screen_presented.
        #expect(
            recordError(Self.patched(16, 0x11))
                == CodecError(
                    offset: 16, reason: .reservedBits(field: "analytics", value: 0x11)))
    }

    @Test func invalidValues() {
        // Screen index 65 535 (0xFF 0xFF 0x03).
        var screen = Self.valid
        screen.replaceSubrange(12...12, with: [0xFF, 0xFF, 0x03])
        screen[0] += 2
        #expect(
            recordError(screen) == CodecError(offset: 12, reason: .invalidValue(field: "screen index", value: 65_535)))
        // Analytics name code 9.
        #expect(
            recordError(Self.patched(16, 0x09))
                == CodecError(
                    offset: 16, reason: .invalidValue(field: "analytics name code", value: 9)))
        // State value type 7 ("state input text" with its value byte changed).
        var value = Hex.decode("122141408aa817345f06000002011002030204")
        value[17] = 0x07
        #expect(
            recordError(value) == CodecError(offset: 17, reason: .invalidValue(field: "state value type", value: 7)))
        // An upper-case UUID without letters must be written lower-case.
        var uuid = Hex.decode(Golden.all.first { $0.name.hasPrefix("error without meta") }!.record)
        for i in 11..<27 { uuid[i] = 0x11 }
        #expect(
            recordError(uuid) == CodecError(offset: 11, reason: .invalidValue(field: "event id letter case", value: 3)))
    }

    @Test func bodyContextMismatch() throws {
        let body = Hex.decode("25400110")  // onboarding_loaded with meta
        let noMeta = RecordHeader(time: Golden.t, onboarding: nil, screenIndex: nil)
        #expect(bodyError(body, header: noMeta) == CodecError(offset: 1, reason: .contextMismatch))
        let meta = RecordHeader(time: Golden.t, onboarding: 0, screenIndex: 0)
        #expect(bodyError(body, header: meta) == nil)
        // Half a header (an onboarding without a screen) means no meta, and the view says so consistently.
        let half = RecordHeader(time: Golden.t, onboarding: 7, screenIndex: nil)
        #expect(bodyError(body, header: half) == CodecError(offset: 1, reason: .contextMismatch))
        let bodyWithoutMeta = Hex.decode("2500")
        let view = try bodyWithoutMeta.withUnsafeBytes { try RecordView(body: $0, header: half) }
        #expect(view.onboarding == nil && view.screenIndex == nil && view.header == noMeta)
        let badScreen = RecordHeader(time: Golden.t, onboarding: 0, screenIndex: RecordFormat.noScreen)
        #expect(bodyError(body, header: badScreen)?.reason == .invalidValue(field: "screen index", value: 65_535))
    }

    @Test func descriptionsSayWhereAndWhy() {
        let error = CodecError(offset: 17, reason: .checksumMismatch(stored: 0xDEAD, computed: 0xBEEF))
        #expect(error.description == "codec error at byte 17: checksum mismatch: stored CRC32C 0xdead, computed 0xbeef")
        #expect(
            CodecError(offset: 3, reason: .unsupportedVersion(2)).description
                == "codec error at byte 3: unsupported format version 2 (this reader knows version 1)")
    }
}

@Suite struct BatchErrorTests {
    static let record = Hex.decode("102041408aa817345f0600000201100201")  // refs 0, 1, 2
    static let strings = Batch.block(type: 1, count: 3, payload: [1, 0x61, 1, 0x62, 1, 0x63])
    static let records = Batch.block(type: 2, count: 1, payload: record)

    @Test func wellFormedBaseline() throws {
        let file = Batch.header + Self.strings + Self.records + Batch.end(strings: 3, records: 1)
        #expect(try BatchReader.events(in: file).count == 1)
    }

    @Test func headerErrors() {
        #expect(batchError([]) == CodecError(offset: 0, reason: .truncated))
        #expect(batchError([0x89, 0x42, 0x57, 0x4C]) == CodecError(offset: 3, reason: .badMagic))
        var version = Batch.header + Batch.end(strings: 0, records: 0)
        version[8] = 2
        #expect(batchError(version) == CodecError(offset: 8, reason: .unsupportedVersion(2)))
        var reserved = Batch.header + Batch.end(strings: 0, records: 0)
        reserved[10] = 1
        #expect(batchError(reserved) == CodecError(offset: 10, reason: .reservedBits(field: "file header", value: 1)))
    }

    @Test func checksumMismatch() {
        var file = Batch.header + Self.strings + Self.records + Batch.end(strings: 3, records: 1)
        file[12 + 13 + 1] ^= 0x20  // "a" → "A" in the strings block
        #expect(batchError(file)?.reason.isChecksumMismatch == true)
        #expect(batchError(file)?.offset == 12)
    }

    @Test func invalidUTF8InStringTable() {
        for bad: [UInt8] in [[0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82]] {
            let block = Batch.block(type: 1, count: 1, payload: [UInt8(bad.count)] + bad)
            let file = Batch.header + block + Batch.end(strings: 1, records: 0)
            #expect(batchError(file) == CodecError(offset: 12 + 13 + 1, reason: .invalidUTF8), "\(bad)")
        }
        // Valid multi-byte text passes.
        let ok = Array("é日本\u{1F600}".utf8)
        let file =
            Batch.header + Batch.block(type: 1, count: 1, payload: [UInt8(ok.count)] + ok)
            + Batch.end(strings: 1, records: 0)
        #expect(batchError(file) == nil)
    }

    @Test func referencesMustBeDefinedFirst() {
        let file = Batch.header + Self.records + Self.strings + Batch.end(strings: 3, records: 1)
        #expect(
            batchError(file) == CodecError(offset: 12 + 13 + 11, reason: .stringReferenceOutOfRange(id: 0, count: 0)))
    }

    @Test func oversizedAndMismatchedCounts() {
        let tooMany = Batch.block(type: 1, count: 7, payload: [1, 0x61, 1, 0x62, 1, 0x63])
        #expect(batchError(Batch.header + tooMany)?.reason == .oversizedCount(count: 7, limit: 6))
        let fewer = Batch.block(type: 1, count: 2, payload: [1, 0x61, 1, 0x62, 1, 0x63])
        #expect(batchError(Batch.header + fewer)?.reason == .lengthMismatch(declared: 6, used: 4))
        let twoRecords = Batch.block(type: 2, count: 2, payload: Self.record + Self.record)
        let file = Batch.header + Self.strings + twoRecords + Batch.end(strings: 3, records: 1)
        #expect(batchError(file)?.reason == .countMismatch(declared: 1, actual: 2))
        let stringsWrong = Batch.header + Self.strings + Self.records + Batch.end(strings: 4, records: 1)
        #expect(batchError(stringsWrong)?.reason == .countMismatch(declared: 4, actual: 3))
        // A records block claiming one record but holding bytes for two.
        let short = Batch.block(type: 2, count: 1, payload: Self.record + Self.record)
        #expect(batchError(Batch.header + Self.strings + short)?.reason == .lengthMismatch(declared: 34, used: 17))
    }

    @Test func structuralErrors() {
        #expect(batchError(Batch.header) == CodecError(offset: 12, reason: .missingEndBlock))
        #expect(batchError(Batch.header + Self.strings) == CodecError(offset: 12 + 19, reason: .missingEndBlock))
        let end = Batch.end(strings: 0, records: 0)
        #expect(batchError(Batch.header + end + [0]) == CodecError(offset: 12 + end.count, reason: .trailingBytes))
        let unknown = Batch.block(type: 9, count: 0, payload: [])
        #expect(batchError(Batch.header + unknown) == CodecError(offset: 12, reason: .unknownBlockType(9)))
        // A record that runs past its block.
        let cut = Batch.block(type: 2, count: 1, payload: Array(Self.record.dropLast()))
        let file = Batch.header + Self.strings + cut + Batch.end(strings: 3, records: 1)
        #expect(batchError(file)?.reason == .lengthMismatch(declared: 16, used: 17))
    }
}

extension CodecError.Reason {
    var isChecksumMismatch: Bool {
        if case .checksumMismatch = self { return true }
        return false
    }
}
