import BoardwalkModel

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
