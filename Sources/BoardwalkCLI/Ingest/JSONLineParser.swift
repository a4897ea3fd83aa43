import Boardwalk

/// The JSON layer's reader as the ingest loop's parser.
struct JSONLineParser: LineParser {
    let reader: EventReader
    /// - Parameter timeUnit: the unit of numeric times (`--time-unit`); `nil` tells it by size.
    init(timeUnit: EpochUnit? = nil) throws {
        do {
            reader = try EventReader()
        } catch {
            throw RuntimeError("\(error)")
        }
        reader.timeUnit = timeUnit
    }
    mutating func parse(_ line: UnsafeRawBufferPointer, readableAfter: Int, lineNumber: Int, arrival: Timestamp) throws
        -> Event
    {
        try reader.read(line: line, readableAfter: readableAfter, lineNumber: lineNumber, arrival: arrival)
    }
}
