/// What a salvage (``Store/salvageEvents(_:damaged:)``, ``Store/salvageEvents(inDataFileOf:_:damaged:)``) read,
/// besides the events it handed out and the damage it reported one by one.
public struct SalvageSummary: Sendable {
    /// How many events the store counted (its `meta/events` counter, as of the commit read), when that counter could
    /// be read: the events handed out are compared with it to say how many were not read.
    public var storedEvents: UInt64?
    /// Whether the salvage read LMDB's pages from the file itself (its trees around damaged pages, or a file that
    /// liblmdb refuses) rather than through liblmdb.
    public var readFromPages: Bool
    /// Blocks and events read from leaf pages that the trees did not reach (below a damaged branch page, or an
    /// older copy of a block whose current one was on a damaged page): each event handed out once, by its seq.
    public var recoveredBlocks: Int
    public var recoveredEvents: Int
    /// How the file was read when it did not open (which meta page, where it was cut short); `nil` otherwise.
    public var note: String?

    init(
        storedEvents: UInt64? = nil, readFromPages: Bool = false, recoveredBlocks: Int = 0, recoveredEvents: Int = 0,
        note: String? = nil
    ) {
        self.storedEvents = storedEvents
        self.readFromPages = readFromPages
        self.recoveredBlocks = recoveredBlocks
        self.recoveredEvents = recoveredEvents
        self.note = note
    }
}
