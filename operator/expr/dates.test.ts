// Tables for date filters with a fixed instant: Java patterns, named formats, zones, epochs, dateAdd.
import { describe, expect, it } from 'vitest';
import { ExpressionError, createRenderer } from './index.js';

const fixed = new Date('2024-01-15T10:30:45.123Z'); // a Monday
const r = createRenderer({ now: () => fixed });
const vars = {
  d: '2024-01-15T10:30:45.123Z',
  paris: '2024-07-04T09:05:03+02:00',
  whole: '2024-01-15T10:30:00Z',
  zoned: '2024-01-15T11:30:45.123+01:00[Europe/Paris]',
  epochS: 1705314645,
  epochMs: 1705314645123,
  local: '2024-01-15T10:30:45',
  sqlText: '2024-01-15 10:30:45',
};

describe('date filter', () => {
  it.each([
    ['{{ d | date("yyyy-MM-dd") }}', '2024-01-15'],
    ['{{ d | date("HH:mm:ss.SSS") }}', '10:30:45.123'],
    ['{{ d | date("EEE EEEE MMM MMMM") }}', 'Mon Monday Jan January'],
    ['{{ d | date("d/M/yy h:mm a") }}', '15/1/24 10:30 AM'],
    ["{{ d | date(\"yyyy-MM-dd'T'HH:mm:ssXXX\") }}", '2024-01-15T10:30:45Z'],
    ["{{ d | date(\"'Day' D 'of' yyyy, '''q''' ''\") }}", "Day 15 of 2024, 'q' '"],
    ["{{ d | date(\"'it''s' HH'h'\") }}", "it's 10h"],
    ['{{ d | date("Z") }} {{ paris | date("Z XXX xx") }}', '+0000 +0200 +02:00 +0200'],
    ['{{ d | date("yyyy-MM-dd HH:mm", timeZone="Europe/Paris") }}', '2024-01-15 11:30'],
    ['{{ d | date("HH:mm VV", timeZone="America/New_York") }}', '05:30 America/New_York'],
    ['{{ paris | date("HH:mm") }}', '09:05'],
    ['{{ paris | date("HH:mm", timeZone="UTC") }}', '07:05'],
    ['{{ zoned | date("HH:mm VV") }}', '11:30 Europe/Paris'],
    ['{{ local | date("HH:mm") }} {{ sqlText | date("yyyy/MM/dd") }}', '10:30 2024/01/15'],
    ['{{ epochS | date("yyyy-MM-dd HH:mm:ss") }}', '2024-01-15 10:30:45'],
    ['{{ epochMs | date("HH:mm:ss.SSS") }}', '10:30:45.123'],
    ['{{ d | date("iso") }}', '2024-01-15T10:30:45.123Z'],
    ['{{ whole | date("iso") }}', '2024-01-15T10:30:00Z'],
    ['{{ paris | date("iso") }}', '2024-07-04T09:05:03+02:00'],
    ['{{ d | date("iso_sec") }}', '2024-01-15T10:30:45Z'],
    ['{{ d | date("iso_milli") }}', '2024-01-15T10:30:45.123Z'],
    ['{{ d | date("iso_date") }} {{ d | date("iso_local_date") }}', '2024-01-15Z 2024-01-15'],
    ['{{ d | date("iso_local_date_time") }}', '2024-01-15T10:30:45.123'],
    ['{{ d | date("iso_date_time", timeZone="Europe/Paris") }}', '2024-01-15T11:30:45.123+01:00[Europe/Paris]'],
    ['{{ paris | date("iso_instant") }}', '2024-07-04T07:05:03Z'],
    ['{{ d | date("sql") }}', '2024-01-15 10:30:45.123000'],
    ['{{ d | date("basic_iso_date") }}', '20240115Z'],
    ['{{ d | date("rfc_1123_date_time") }}', 'Mon, 15 Jan 2024 10:30:45 GMT'],
    ['{{ "15/01/2024" | date("yyyy-MM-dd", existingFormat="dd/MM/yyyy") }}', '2024-01-15'],
  ])('%s', (template, expected) => {
    expect(r.render(template, vars)).toBe(expected);
  });
});

describe('dateAdd, timestamps and now()', () => {
  it.each([
    ['{{ d | dateAdd(1, "DAYS") }}', '2024-01-16T10:30:45.123Z'],
    ['{{ d | dateAdd(-2, "HOURS") | date("HH:mm") }}', '08:30'],
    ['{{ d | dateAdd(1, "MONTHS", format="yyyy-MM-dd") }}', '2024-02-15'],
    ['{{ d | dateAdd(1, "WEEKS") | date("yyyy-MM-dd") }}', '2024-01-22'],
    ['{{ d | dateAdd(90, "MINUTES") | date("HH:mm") }}', '12:00'],
    ['{{ d | dateAdd(1, "YEARS") | date("yyyy") }}', '2025'],
    ['{{ d | timestamp }}', '1705314645'],
    ['{{ d | timestampMilli }}', '1705314645123'],
    ['{{ d | timestampMicro }}', '1705314645123000'],
    ['{{ now() }}', '2024-01-15T10:30:45.123Z'],
    ['{{ now(timeZone="Europe/Paris") }}', '2024-01-15T11:30:45.123+01:00'],
    ['{{ now() | date("yyyy-MM-dd") }}', '2024-01-15'],
    ['{{ now() | dateAdd(-1, "DAYS") | date("yyyy-MM-dd") }}', '2024-01-14'],
    ['{{ "08:15" | date("yyyy-MM-dd HH:mm") }}', '2024-01-15 08:15'], // a time without a day is on the injected day
    ['{{ "08:15" | date("yyyy-MM-dd", existingFormat="HH:mm") }}', '2024-01-15'],
  ])('%s', (template, expected) => {
    expect(r.render(template, vars)).toBe(expected);
  });

  it.each([
    ['{{ "not a date" | date("yyyy") }}', 'Cannot parse date'],
    ['{{ d | date("yyyy", timeZone="Mars/Olympus") }}', 'Unknown time zone'],
    ['{{ d | dateAdd(1, "FORTNIGHTS") }}', 'unknown unit'],
    ['{{ d | date("bbb") }}', 'unknown pattern letter'],
  ])('%s fails', (template, message) => {
    expect(() => r.render(template, vars)).toThrow(ExpressionError);
    expect(() => r.render(template, vars)).toThrow(message);
  });
});
