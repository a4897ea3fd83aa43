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
            throw CodecError(offset: offset, reason: .oversizedCount(count: length, limit: RecordFormat.maxRecordLength))
        }
        let contentStart = r.position
        guard Int(length) <= r.remaining else { throw CodecError(offset: bytes.count, reason: .truncated) }
        r.end = contentStart + Int(length)
        _offset = offset
        try parse(&r, header: nil, limit: stringLimit)
        guard r.position == r.end else {
            throw CodecError(offset: r.position, reason: .lengthMismatch(declared: Int(length), used: r.position - contentStart))
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
    public static func extent(ofRecordIn bytes: UnsafeRawBufferPointer, at offset: Int) throws(CodecError) -> Range<Int> {
        guard let base = bytes.baseAddress, offset >= 0, offset < bytes.count else {
            throw CodecError(offset: offset, reason: .truncated)
        }
        var r = ByteReader(base: base, position: offset, end: bytes.count)
        let length = try r.varint()
        guard length <= UInt64(RecordFormat.maxRecordLength) else {
            throw CodecError(offset: offset, reason: .oversizedCount(count: length, limit: RecordFormat.maxRecordLength))
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
                    throw CodecError(offset: screenOffset, reason: .invalidValue(field: "screen index", value: Int64(truncatingIfNeeded: s)))
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
                guard b & 0xF0 == 0 else { throw CodecError(offset: subOffset, reason: .reservedBits(field: "analytics", value: UInt64(b))) }
                r1 = try r.ref(limit: limit)
            } else {
                guard code <= 7 else {
                    throw CodecError(offset: subOffset, reason: .invalidValue(field: "analytics name code", value: Int64(code)))
                }
                let allowed: UInt8 = code == AnalyticsName.screenCompleted.code
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
                throw CodecError(offset: subOffset, reason: .invalidValue(field: "state value type", value: Int64(type)))
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

/// An analytics event's name in a ``RecordView``: a known name, or the id of an unknown name's raw text.
public enum AnalyticsNameRef: Hashable, Sendable {
    /// One of the names the SDKs know.
    case known(AnalyticsName)
    /// Any other name, kept verbatim: the id of its text.
    case unknown(StringID)
}

/// An event id in a ``RecordView``: an interned string, or a UUID stored inline in 16 bytes.
public enum EventIDRef: Hashable, Sendable {
    /// An event id that is not a canonical UUID, interned like any other string.
    case string(StringID)
    /// A canonical UUID (`8-4-4-4-12` hex digits), kept as its 128 bits and the case of its letters.
    case uuid(high: UInt64, low: UInt64, uppercase: Bool)

    /// The UUID's 36-character text, in the case it arrived in; `nil` for ``string(_:)``.
    public var uuidString: String? {
        if case .uuid(let hi, let lo, let upper) = self { return formatUUID(hi: hi, lo: lo, upper: upper) }
        return nil
    }
}

/// The three string ids of a select or multi-select option.
public struct ChoiceRef: Hashable, Sendable {
    /// The option's id.
    public var id: StringID
    /// The option's value (what analytics group by).
    public var value: StringID
    /// The text the user saw.
    public var label: StringID

    /// An option from its three string ids.
    @inlinable
    public init(id: StringID, value: StringID, label: StringID) {
        self.id = id
        self.value = value
        self.label = label
    }
}

/// The options of a select (one) or multi-select (any number) state update in a ``RecordView``.
public struct ChoiceRefs: Sequence {
    @usableFromInline let base: UnsafeRawPointer
    @usableFromInline let start: Int
    @usableFromInline let single: ChoiceRef?
    /// The number of options.
    public let count: Int

    @inlinable
    init(base: UnsafeRawPointer, start: Int, count: Int, single: ChoiceRef?) {
        self.base = base
        self.start = start
        self.count = count
        self.single = single
    }

    /// Reads the options one by one from the record's (already validated) bytes.
    public struct Iterator: IteratorProtocol {
        @usableFromInline let base: UnsafeRawPointer
        @usableFromInline var position: Int
        @usableFromInline var left: Int
        @usableFromInline var single: ChoiceRef?

        @inlinable
        init(_ c: ChoiceRefs) {
            base = c.base
            position = c.start
            left = c.single == nil ? c.count : 0
            single = c.single
        }

        /// The next option, or `nil` after the last.
        @inlinable
        public mutating func next() -> ChoiceRef? {
            if let s = single {
                single = nil
                return s
            }
            guard left > 0 else { return nil }
            left -= 1
            // The view validated these bytes when it was created.
            let id = UInt32(truncatingIfNeeded: uncheckedVarint(base, &position))
            let value = UInt32(truncatingIfNeeded: uncheckedVarint(base, &position))
            let label = UInt32(truncatingIfNeeded: uncheckedVarint(base, &position))
            return ChoiceRef(id: id, value: value, label: label)
        }
    }

    /// An iterator over the options.
    @inlinable
    public func makeIterator() -> Iterator { Iterator(self) }

    /// The number of options.
    @inlinable
    public var underestimatedCount: Int { count }
}

extension RecordView {
    @inlinable @inline(__always)
    func optional(_ ref: UInt32) -> StringID? { ref == RecordFormat.absent ? nil : ref }

    /// Whether the event has `meta` (onboarding, screen, total screens).
    @inlinable
    public var hasMeta: Bool { flags & UInt8(RecordFormat.flagMeta) != 0 }
    /// The onboarding id; `nil` without `meta`.
    @inlinable
    public var onboarding: StringID? { optional(onboardingRef) }
    /// The 0-based screen index; `nil` without `meta`.
    @inlinable
    public var screenIndex: Int? { hasMeta ? Int(screen) : nil }
    /// The screen's client id; `nil` without `meta`.
    @inlinable
    public var screenClientID: StringID? { optional(screenClientRef) }
    /// How many screens the onboarding has; `nil` without `meta`.
    @inlinable
    public var totalScreens: Int? { hasMeta ? Int(truncatingIfNeeded: total) : nil }
    /// The session id, if any.
    @inlinable
    public var session: StringID? { optional(sessionRef) }
    /// The profile id, if any.
    @inlinable
    public var profile: StringID? { optional(profileRef) }
    /// The placement, if any.
    @inlinable
    public var placement: StringID? { optional(placementRef) }
    /// The variation, if any.
    @inlinable
    public var variation: StringID? { optional(variationRef) }
    /// The event id, if any: interned, or a UUID kept inline.
    @inlinable
    public var eventID: EventIDRef? {
        switch (flags >> UInt8(RecordFormat.eventIDShift)) & 3 {
        case 0: nil
        case 1: .string(eventIDRef)
        case let mode: .uuid(high: uuidHi, low: uuidLo, uppercase: mode == 3)
        }
    }

    /// The analytics name of an analytics event; `nil` for other kinds.
    @inlinable
    public var analyticsName: AnalyticsNameRef? {
        guard kind == .analytics else { return nil }
        let code = sub & 0x0F
        if code == RecordFormat.analyticsUnknown { return .unknown(r1) }
        return .known(AnalyticsName(code: code)!)
    }

    /// The known analytics name; `nil` for other kinds and for unknown names.
    @inlinable
    public var knownAnalyticsName: AnalyticsName? {
        kind == .analytics ? AnalyticsName(code: sub & 0x0F) : nil
    }

    /// The element: `screen_completed`'s `element_id` or a state update's element id.
    @inlinable
    public var elementID: StringID? {
        switch kind {
        case .analytics: optional(r2)
        case .stateUpdated: r0
        default: nil
        }
    }

    /// `screen_completed`'s reply, if any.
    @inlinable
    public var reply: StringID? { kind == .analytics ? optional(r3) : nil }

    /// The action id of an open-paywall, custom or close action.
    @inlinable
    public var actionID: StringID? {
        switch kind {
        case .openPaywall, .custom, .close: r1
        default: nil
        }
    }

    /// A state update's element type.
    @inlinable
    public var elementType: ElementType? {
        guard kind == .stateUpdated else { return nil }
        switch sub & 0x0F {
        case RecordFormat.valueSelect: return .select
        case RecordFormat.valueMultiSelect: return .multiSelect
        case RecordFormat.valueDate: return .datePicker
        default: return .input
        }
    }

    /// An input's type.
    @inlinable
    public var inputType: InputType? {
        guard kind == .stateUpdated else { return nil }
        switch sub & 0x0F {
        case RecordFormat.valueText: return .text
        case RecordFormat.valueEmail: return .email
        case RecordFormat.valueNumber: return .number
        default: return nil
        }
    }

    /// A text or email input's value.
    @inlinable
    public var inputText: StringID? {
        guard kind == .stateUpdated else { return nil }
        let t = sub & 0x0F
        return t == RecordFormat.valueText || t == RecordFormat.valueEmail ? r1 : nil
    }

    /// A number input's value.
    @inlinable
    public var number: Double? {
        kind == .stateUpdated && sub & 0x0F == RecordFormat.valueNumber ? Double(bitPattern: n0) : nil
    }

    /// A date picker's value.
    @inlinable
    public var date: DateParts? {
        guard kind == .stateUpdated, sub & 0x0F == RecordFormat.valueDate else { return nil }
        return DateParts(
            year: sub & RecordFormat.dateHasYear != 0 ? Int(truncatingIfNeeded: Int64(bitPattern: n0)) : nil,
            month: sub & RecordFormat.dateHasMonth != 0 ? Int(truncatingIfNeeded: n1) : nil,
            day: sub & RecordFormat.dateHasDay != 0 ? Int(truncatingIfNeeded: n2) : nil)
    }

    /// The options of a select (one) or multi-select (zero or more); empty for anything else.
    @inlinable
    public var choices: ChoiceRefs {
        if kind == .stateUpdated {
            switch sub & 0x0F {
            case RecordFormat.valueSelect:
                return ChoiceRefs(base: base, start: 0, count: 1, single: ChoiceRef(id: r1, value: r2, label: r3))
            case RecordFormat.valueMultiSelect:
                return ChoiceRefs(base: base, start: choicesOffset, count: choicesCount, single: nil)
            default: break
            }
        }
        return ChoiceRefs(base: base, start: 0, count: 0, single: nil)
    }

    /// An error's domain.
    @inlinable
    public var errorDomain: StringID? { kind == .error ? r1 : nil }
    /// An error's code.
    @inlinable
    public var errorCode: Int? { kind == .error ? Int(truncatingIfNeeded: Int64(bitPattern: n0)) : nil }
    /// An error's message.
    @inlinable
    public var errorMessage: StringID? { kind == .error ? r2 : nil }

    /// The record's header: what a store key carries.
    @inlinable
    public var header: RecordHeader {
        RecordHeader(time: time, onboarding: onboarding, screenIndex: hasMeta ? screen : nil)
    }
}

/// Whether any 4-bit group of `x` is 0xA...0xF (printed as a letter).
@inlinable @inline(__always)
package func hasHexLetter(_ x: UInt64) -> Bool {
    let ones: UInt64 = 0x1111_1111_1111_1111
    return (x >> 3) & ones & ((x >> 2) | (x >> 1)) != 0
}
