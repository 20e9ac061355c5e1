// Panels shown beside the flow editor (Edit tab and /ui/flows/new), given the text being edited: another page adds one
// by appending `{ id, label, component }` here (a live graph preview, for instance). Empty until one is registered.
import type { ComponentType } from 'react';

export interface EditorPanelProps {
  /** The YAML being edited (unsaved, possibly invalid). */
  source: string;
  namespace?: string;
  flowId?: string;
}
export interface EditorPanel { id: string; label: string; component: ComponentType<EditorPanelProps> }

export const EDITOR_PANELS: EditorPanel[] = [];
