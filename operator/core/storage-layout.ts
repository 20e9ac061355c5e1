// Where a namespace's files live in internal storage (Kestra's layout), in one place for the storage code and for the
// expression functions that name them (`fileURI()`): `<namespace with dots as slashes>/_files/<path>`. Pure.

/** The folder segment of namespace files; reserved as a namespace segment (operator/model/semantic.ts). */
export const NAMESPACE_FILES_SEGMENT = '_files';

/** The storage folder of a namespace's files, without scheme nor slashes around it. */
export function namespaceFilesPath(namespace: string): string {
  return `${namespace.replace(/\./g, '/')}/${NAMESPACE_FILES_SEGMENT}`;
}
