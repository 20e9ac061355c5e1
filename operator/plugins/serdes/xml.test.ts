// Tests of serdes.xml.XmlToIon and IonToXml: org.json's mapping (attributes, repeated elements, content, typed text),
// `query` rows streamed, forceList, round trips, and hostile input (malformed XML, entities, huge rows).
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupConverted, convert, plain } from './test-helpers.js';
import { ionToXml, xmlToIon } from './xml.js';

afterEach(async () => { await cleanupConverted(); delete process.env.STORAGE_MAX_ITEM_BYTES; });

const XML = `<?xml version="1.0" encoding="UTF-8"?>
<catalog name="shop">
  <product id="1"><title>Lamp</title><price>12.50</price><tag>a</tag><tag>b</tag><stock>true</stock></product>
  <product id="2"><title><![CDATA[Desk & <chair>]]></title><price>007</price><tag>c</tag><note/></product>
  <other>ignored by the query</other>
</catalog>`;

describe('XmlToIon', () => {
  it('without query the document is one row, mapped as org.json does', async () => {
    const c = await convert(xmlToIon, {}, XML);
    expect(c.r.metrics).toEqual([{ name: 'records', type: 'counter', value: 1 }]);
    expect(plain(await c.rows())).toEqual([{ catalog: {
      name: 'shop',
      product: [
        { id: 1, title: 'Lamp', price: 12.5, tag: ['a', 'b'], stock: true },
        { id: 2, title: 'Desk & <chair>', price: '007', tag: 'c', note: '' },
      ],
      other: 'ignored by the query',
    } }]);
  });

  it('query: each matching element is a row; forceList makes lists of single elements; text with attributes is content', async () => {
    const c = await convert(xmlToIon, { query: '/catalog/product', parserConfiguration: { forceList: ['tag'] } }, XML);
    expect(plain(await c.rows())).toEqual([
      { id: 1, title: 'Lamp', price: 12.5, tag: ['a', 'b'], stock: true },
      { id: 2, title: 'Desk & <chair>', price: '007', tag: ['c'], note: '' },
    ]);
    expect(plain(await (await convert(xmlToIon, { query: '/r/v' }, '<r><v unit="kg">5</v></r>')).rows())).toEqual([{ unit: 'kg', content: 5 }]);
    expect((await convert(xmlToIon, { query: '/r/0' }, '<r/>')).r.error).toMatch(/Property 'query' must be a path of element names/);
  });

  it('malformed XML fails naming the reason; entities are not expanded from outside; huge rows name STORAGE_MAX_ITEM_BYTES', async () => {
    expect((await convert(xmlToIon, {}, '<a><b></a>')).r.error).toMatch(/malformed XML/);
    const xxe = '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>';
    const r = await convert(xmlToIon, {}, xxe);
    expect(r.r.state).toBe('FAILED');
    expect(r.r.error).not.toMatch(/root:/);
    process.env.STORAGE_MAX_ITEM_BYTES = '2048';
    expect((await convert(xmlToIon, {}, `<r>${'<v>xxxxxxxxxx</v>'.repeat(500)}</r>`)).r.error).toMatch(/STORAGE_MAX_ITEM_BYTES/);
    // with a query, only one row at a time is held: the same file of many small rows passes
    expect((await (await convert(xmlToIon, { query: '/r/v' }, `<r>${'<v>xxxxxxxxxx</v>'.repeat(500)}</r>`)).rows()).length).toBe(500);
  });
});

describe('IonToXml', () => {
  it('writes rows as <item> elements under rootName, lists wrapped, null empty, text escaped, names made valid', async () => {
    const c = await convert(ionToXml, { rootName: 'products' }, '{id:1,name:"a<b & \\"c\\"",tags:["x","y"],none:null,"unit price":2.5,at:2024-01-31T10:00:00Z}\n');
    expect(c.r.metrics).toEqual([{ name: 'records', type: 'counter', value: 1 }]);
    expect(await c.text()).toBe(`<?xml version='1.0' encoding='UTF-8'?>
<products>
  <item>
    <id>1</id>
    <name>a&lt;b &amp; &quot;c&quot;</name>
    <tags>
      <tags>x</tags>
      <tags>y</tags>
    </tags>
    <none/>
    <unit_price>2.5</unit_price>
    <at>2024-01-31T10:00:00.000Z</at>
  </item>
</products>
`);
  });

  it('round trip ION → XML → ION (query /items/item) keeps the rows', async () => {
    const ion = '{id:1,name:"Lamp",price:12.5,ok:true,nested:{k:"v"}}\n{id:2,name:"Desk",price:3,ok:false,nested:{k:"w"}}\n';
    const back = await convert(xmlToIon, { query: '/items/item' }, await convert(ionToXml, {}, ion));
    expect(plain(await back.rows())).toEqual([
      { id: 1, name: 'Lamp', price: 12.5, ok: true, nested: { k: 'v' } },
      { id: 2, name: 'Desk', price: 3, ok: false, nested: { k: 'w' } },
    ]);
  });
});
