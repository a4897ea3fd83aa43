import BoardwalkModel

// Typed access to results, for apps that read a table's cells rather than print them: without these, reading a
// count meant switching over every case of `Value`, and a duration's unit (microseconds) was easy to miss.

extension ResultTable {
    /// The cell of `row` in the column named `column`, or `nil` when the table has no such column.
    ///
    /// ```swift
    /// let table = try Query.parse(#"sessions | count by answer("level") as level"#).run(on: source)
    /// for row in table.rows.indices {
    ///     print(table[row, "level"]?.stringValue ?? "(no answer)", table[row, "count"]?.intValue ?? 0)
    /// }
    /// ```
    ///
    /// Column names are as the query names them: a group key's field or expression as written
    /// (`answer("level")`) or its `as` alias, `count` for `count`, each `stats` aggregate as written
    /// (`count()`, `p50(duration)`) or its alias; `columns` lists them. Aliases keep code independent of how an
    /// expression is spelled.
    /// - Precondition: `row` is a valid index of ``rows``.
    /// - Complexity: O(columns) to find the column.
    public subscript(row: Int, column: String) -> Value? {
        columns.firstIndex(of: column).map { rows[row][$0] }
    }
}

extension Value {
    /// The integer of an ``integer(_:)`` value (counts, screens, seqs, steps), or `nil` for any other case.
    ///
    /// Only integers: an average or a rate is a ``number(_:)`` even when it happens to be whole; read it with
    /// ``doubleValue``.
    public var intValue: Int? {
        if case .integer(let v) = self { Int(exactly: v) } else { nil }
    }

    /// The value of a ``number(_:)`` or ``integer(_:)`` as a `Double` (rates, percentages, averages, counts), or
    /// `nil` for any other case. Durations are not numbers here: read them with ``durationSeconds``.
    public var doubleValue: Double? {
        switch self {
        case .number(let v): v
        case .integer(let v): Double(v)
        default: nil
        }
    }

    /// A ``duration(_:)`` in seconds (``duration(_:)`` holds microseconds), or `nil` for any other case.
    public var durationSeconds: Double? {
        if case .duration(let micros) = self { micros / 1_000_000 } else { nil }
    }

    /// The text of a ``string(_:)`` value (names, onboarding and session ids, select and input answers, dates as
    /// `YYYY-MM-DD`), or `nil` for any other case.
    public var stringValue: String? {
        if case .string(let s) = self { s } else { nil }
    }

    /// The flag of a ``bool(_:)`` value (`completed`, `did(…)`), or `nil` for any other case.
    public var boolValue: Bool? {
        if case .bool(let b) = self { b } else { nil }
    }

    /// The instant of a ``time(_:)`` value (`time`, `started`, `ended`), or the start of a ``bucket(_:)``
    /// (`day(started)`); `nil` for any other case.
    public var timestampValue: Timestamp? {
        switch self {
        case .time(let t): t
        case .bucket(let b): b.start
        default: nil
        }
    }

    /// The option values of a ``set(_:)`` value (a multi-select answer, sorted and unique), or `nil` for any other
    /// case.
    public var setValue: [String]? {
        if case .set(let items) = self { items } else { nil }
    }

    /// The value as the `.table` format prints it: absent as `-`, numbers rounded to 4 decimals, durations in
    /// seconds with `s` (`1.5s`), times in ISO-8601 UTC, sets as `[a, b]`, control characters escaped.
    public var displayText: String { Value.tableText(self) }
}
