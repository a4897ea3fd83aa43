import BoardwalkModel

/// A decoded record whose strings are still ids: the allocation-free view that scans filter and reduce on.
///
/// Creating a view validates the whole record (bounds, tags, flags, varints, string references below the
/// given limit) and decodes its scalar fields; the accessors then cannot fail. Nothing is allocated and no
/// string is resolved: string fields are ``StringID``s into the caller's dictionary.
///
/// A view keeps a pointer into the bytes it was parsed from (for multi-select choices): like swift-nio's
/// `ByteBuffer` views or GRDB's `Row` during iteration, it is valid only while those bytes are. Do not keep
/// it past the read transaction or buffer scope it came from; call ``event(strings:)`` for an owned value.
///
/// ```swift
/// try bytes.withUnsafeBytes { raw in
///     var offset = 0
///     while offset < raw.count {
///         let view = try RecordView(record: raw, at: offset)
///         if view.analyticsName == .known(.screenPresented) { count += 1 }
///         offset += view.byteCount
///     }
/// }
/// ```
public struct RecordView {
    @usableFromInline var base: UnsafeRawPointer
    @usableFromInline var _offset: Int = 0
    @usableFromInline var _byteCount: Int = 0
    @usableFromInline var _kind: EventKind = .onboardingLoaded
    @usableFromInline var _time: Int64 = 0

    /// Where the record starts in the buffer it was parsed from (its length prefix, for a full record).
    @inlinable public var offset: Int { _offset }
    /// The record's size in bytes, length prefix included: the next record of a sequence starts at
    /// `offset + byteCount`.
    @inlinable public var byteCount: Int { _byteCount }
    /// The event's kind.
    @inlinable public var kind: EventKind { _kind }
    /// When the event happened.
    @inlinable public var time: Timestamp { Timestamp(microseconds: _time) }

    @usableFromInline var flags: UInt8 = 0
    @usableFromInline var sub: UInt8 = 0
    @usableFromInline var screen: UInt16 = RecordFormat.noScreen
    @usableFromInline var onboardingRef: UInt32 = RecordFormat.absent
    @usableFromInline var screenClientRef: UInt32 = RecordFormat.absent
    @usableFromInline var sessionRef: UInt32 = RecordFormat.absent
    @usableFromInline var profileRef: UInt32 = RecordFormat.absent
    @usableFromInline var eventIDRef: UInt32 = RecordFormat.absent
    @usableFromInline var placementRef: UInt32 = RecordFormat.absent
    @usableFromInline var variationRef: UInt32 = RecordFormat.absent
    // Kind-specific references: see the accessors.
    @usableFromInline var r0: UInt32 = RecordFormat.absent
    @usableFromInline var r1: UInt32 = RecordFormat.absent
    @usableFromInline var r2: UInt32 = RecordFormat.absent
    @usableFromInline var r3: UInt32 = RecordFormat.absent
    @usableFromInline var total: Int64 = 0
    @usableFromInline var n0: UInt64 = 0
    @usableFromInline var n1: Int64 = 0
    @usableFromInline var n2: Int64 = 0
    @usableFromInline var uuidHi: UInt64 = 0
    @usableFromInline var uuidLo: UInt64 = 0
    @usableFromInline var choicesOffset: Int = 0
    @usableFromInline var choicesCount: Int = 0

    /// Parses the full (length-prefixed, self-contained) record that starts at `offset` in `bytes`.
    ///
    /// - Parameters:
    ///   - bytes: the buffer; only `bytes[offset..<offset + byteCount]` is read.
    ///   - offset: where the record's length prefix starts.
    ///   - stringLimit: every string reference must be below this (a batch reader passes the number of
    ///     strings in its table); the default accepts any id but the reserved `UInt32.max`.
    /// - Throws: ``CodecError`` with the offset in `bytes` and the reason; ``CodecError/Reason/unknownKind(_:)``
    ///   and ``CodecError/Reason/unsupportedVersion(_:)`` mean the record is well-framed and a scanner may
    ///   skip it with ``extent(ofRecordIn:at:)``.
    /// - Complexity: O(record length); no allocation.
    @inlinable @inline(__always)
    public init(record bytes: UnsafeRawBufferPointer, at offset: Int = 0, stringLimit: StringID = RecordFormat.absent)
        throws(CodecError)
    {
        guard let base = bytes.baseAddress, offset >= 0, offset < bytes.count else {
            throw CodecError(offset: offset, reason: .truncated)
        }
        self.base = base
        var r = ByteReader(base: base, position: offset, end: bytes.count)
        let length = try r.varint()
        guard length <= UInt64(RecordFormat.maxRecordLength) else {
            throw CodecError(
                offset: offset, reason: .oversizedCount(count: length, limit: RecordFormat.maxRecordLength))
        }
        let contentStart = r.position
        guard Int(length) <= r.remaining else { throw CodecError(offset: bytes.count, reason: .truncated) }
        r.end = contentStart + Int(length)
        _offset = offset
        try parse(&r, header: nil, limit: stringLimit)
        guard r.position == r.end else {
            throw CodecError(
                offset: r.position, reason: .lengthMismatch(declared: Int(length), used: r.position - contentStart))
        }
        _byteCount = r.end - offset
    }

    /// Parses a record body (as ``RecordEncoder/appendBody(_:strings:)`` writes it) that fills `bytes`,
    /// taking time, onboarding and screen index from `header` (the store key).
    ///
    /// - Throws: ``CodecError`` with the offset in `bytes`; ``CodecError/Reason/contextMismatch`` when the
    ///   body's `meta` flag disagrees with `header`.
    /// - Complexity: O(body length); no allocation.
    @inlinable @inline(__always)
    public init(body bytes: UnsafeRawBufferPointer, header: RecordHeader, stringLimit: StringID = RecordFormat.absent)
        throws(CodecError)
    {
        guard let base = bytes.baseAddress, bytes.count > 0 else { throw CodecError(offset: 0, reason: .truncated) }
        self.base = base
        var r = ByteReader(base: base, position: 0, end: bytes.count)
        try parse(&r, header: header, limit: stringLimit)
        guard r.position == r.end else {
            throw CodecError(offset: r.position, reason: .lengthMismatch(declared: bytes.count, used: r.position))
        }
        _byteCount = bytes.count
    }

    /// The byte range of the full record starting at `offset`, read from its length prefix alone, so a
    /// reader can skip a record whose kind or version it does not know.
    /// - Throws: ``CodecError`` when the prefix is malformed or the record runs past the end of `bytes`.
    @inlinable
    public static func extent(ofRecordIn bytes: UnsafeRawBufferPointer, at offset: Int) throws(CodecError) -> Range<Int>
    {
        guard let base = bytes.baseAddress, offset >= 0, offset < bytes.count else {
            throw CodecError(offset: offset, reason: .truncated)
        }
        var r = ByteReader(base: base, position: offset, end: bytes.count)
        let length = try r.varint()
        guard length <= UInt64(RecordFormat.maxRecordLength) else {
            throw CodecError(
                offset: offset, reason: .oversizedCount(count: length, limit: RecordFormat.maxRecordLength))
        }
        guard Int(length) <= r.remaining else { throw CodecError(offset: bytes.count, reason: .truncated) }
        return offset..<(r.position + Int(length))
    }

    @inlinable @inline(__always)
    mutating func parse(_ r: inout ByteReader, header: RecordHeader?, limit: UInt32) throws(CodecError) {
        let tagOffset = r.position
        let tag = try r.byte()
        let version = Int(tag >> RecordFormat.versionShift)
        guard version == RecordFormat.version else {
            throw CodecError(offset: tagOffset, reason: .unsupportedVersion(version))
        }
        guard let kind = EventKind(code: tag & RecordFormat.kindMask) else {
            throw CodecError(offset: tagOffset, reason: .unknownKind(tag & RecordFormat.kindMask))
        }
        _kind = kind

        let flagsOffset = r.position
        let flags = try r.varint()
        guard flags & ~RecordFormat.flagsDefined == 0 else {
            throw CodecError(offset: flagsOffset, reason: .reservedBits(field: "flags", value: flags))
        }
        self.flags = UInt8(truncatingIfNeeded: flags)
        let hasMeta = flags & RecordFormat.flagMeta != 0

        if let header {
            guard header.hasMeta == hasMeta else { throw CodecError(offset: flagsOffset, reason: .contextMismatch) }
            _time = header.time.microseconds
            if hasMeta, let s = header.screenIndex, let o = header.onboarding {
                guard Int(s) <= Meta.maxScreenIndex else {
                    throw CodecError(offset: 0, reason: .invalidValue(field: "screen index", value: Int64(s)))
                }
                screen = s
                onboardingRef = o
            }
        } else {
            _time = Int64(bitPattern: try r.fixed64())
            if hasMeta {
                onboardingRef = try r.ref(limit: limit)
                let screenOffset = r.position
                let s = try r.varint()
                guard s <= UInt64(Meta.maxScreenIndex) else {
                    throw CodecError(
                        offset: screenOffset,
                        reason: .invalidValue(field: "screen index", value: Int64(truncatingIfNeeded: s)))
                }
                screen = UInt16(truncatingIfNeeded: s)
            }
        }
        if hasMeta {
            screenClientRef = try r.ref(limit: limit)
            total = try r.signed()
        }
        if flags & RecordFormat.flagSession != 0 { sessionRef = try r.ref(limit: limit) }
        if flags & RecordFormat.flagProfile != 0 { profileRef = try r.ref(limit: limit) }
        switch (flags >> RecordFormat.eventIDShift) & 3 {
        case 0: break
        case 1: eventIDRef = try r.ref(limit: limit)
        case let mode:
            let uuidOffset = r.position
            // Stored big-endian (the usual UUID byte order); fixed64 reads little-endian.
            uuidHi = try r.fixed64().byteSwapped
            uuidLo = try r.fixed64().byteSwapped
            // A UUID without hex letters is written as lowercase: one spelling per event keeps the format canonical.
            if mode == 3 && !hasHexLetter(uuidHi) && !hasHexLetter(uuidLo) {
                throw CodecError(offset: uuidOffset, reason: .invalidValue(field: "event id letter case", value: 3))
            }
        }
        if flags & RecordFormat.flagPlacement != 0 { placementRef = try r.ref(limit: limit) }
        if flags & RecordFormat.flagVariation != 0 { variationRef = try r.ref(limit: limit) }

        switch kind {
        case .analytics:
            let subOffset = r.position
            let b = try r.byte()
            sub = b
            let code = b & 0x0F
            if code == RecordFormat.analyticsUnknown {
                guard b & 0xF0 == 0 else {
                    throw CodecError(offset: subOffset, reason: .reservedBits(field: "analytics", value: UInt64(b)))
                }
                r1 = try r.ref(limit: limit)
            } else {
                guard code <= 7 else {
                    throw CodecError(
                        offset: subOffset, reason: .invalidValue(field: "analytics name code", value: Int64(code)))
                }
                let allowed: UInt8 =
                    code == AnalyticsName.screenCompleted.code
                    ? RecordFormat.analyticsHasElement | RecordFormat.analyticsHasReply : 0
                guard b & 0xF0 & ~allowed == 0 else {
                    throw CodecError(offset: subOffset, reason: .reservedBits(field: "analytics", value: UInt64(b)))
                }
                if b & RecordFormat.analyticsHasElement != 0 { r2 = try r.ref(limit: limit) }
                if b & RecordFormat.analyticsHasReply != 0 { r3 = try r.ref(limit: limit) }
            }
        case .stateUpdated:
            r0 = try r.ref(limit: limit)
            let subOffset = r.position
            let b = try r.byte()
            sub = b
            let type = b & 0x0F
            let dateBits = RecordFormat.dateHasYear | RecordFormat.dateHasMonth | RecordFormat.dateHasDay
            guard b & ~(0x0F | (type == RecordFormat.valueDate ? dateBits : 0)) == 0 else {
                throw CodecError(offset: subOffset, reason: .reservedBits(field: "state value", value: UInt64(b)))
            }
            switch type {
            case RecordFormat.valueSelect:
                r1 = try r.ref(limit: limit)
                r2 = try r.ref(limit: limit)
                r3 = try r.ref(limit: limit)
            case RecordFormat.valueMultiSelect:
                let countOffset = r.position
                let count = try r.varint()
                let most = r.remaining / 3
                guard count <= UInt64(most) else {
                    throw CodecError(offset: countOffset, reason: .oversizedCount(count: count, limit: most))
                }
                choicesOffset = r.position
                choicesCount = Int(count)
                for _ in 0..<(choicesCount * 3) { _ = try r.ref(limit: limit) }
            case RecordFormat.valueText, RecordFormat.valueEmail:
                r1 = try r.ref(limit: limit)
            case RecordFormat.valueNumber:
                n0 = try r.fixed64()
            case RecordFormat.valueDate:
                if b & RecordFormat.dateHasYear != 0 { n0 = UInt64(bitPattern: try r.signed()) }
                if b & RecordFormat.dateHasMonth != 0 { n1 = try r.signed() }
                if b & RecordFormat.dateHasDay != 0 { n2 = try r.signed() }
            default:
                throw CodecError(
                    offset: subOffset, reason: .invalidValue(field: "state value type", value: Int64(type)))
            }
        case .openPaywall, .custom, .close:
            r1 = try r.ref(limit: limit)
        case .onboardingLoaded:
            break
        case .error:
            r1 = try r.ref(limit: limit)
            n0 = UInt64(bitPattern: try r.signed())
            r2 = try r.ref(limit: limit)
        }
    }
}
