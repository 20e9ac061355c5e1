// The serdes.* task types (Kestra's plugin-serdes): converters between ION row files and CSV, JSON, Avro, Parquet,
// Excel and XML, listed once for the built-in catalog (operator/plugins/catalog.ts).
import type { PluginDefinition } from '../define.js';
import { csvToIon, ionToCsv } from './csv.js';
import { avroToIon, ionToAvro } from './avro.js';
import { excelToIon, ionToExcel } from './excel.js';
import { ionToJson, jsonToIon } from './json.js';
import { ionToParquet, parquetToIon } from './parquet.js';
import { ionToXml, xmlToIon } from './xml.js';

export const SERDES_DEFINITIONS: readonly PluginDefinition[] = [csvToIon, ionToCsv, jsonToIon, ionToJson, avroToIon, ionToAvro, xmlToIon, ionToXml, parquetToIon, ionToParquet, excelToIon, ionToExcel];
