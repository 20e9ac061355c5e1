// Panels shown beside the flow editor (Edit tab and /ui/flows/new), given the text being edited: another page adds one
// by appending `{ id, label, component }` here. The live graph of the unsaved text (components/graph/SourceGraphPreview) is one.
import type { ComponentType } from 'react';
import { SourceGraphPreview } from '../../components/graph/SourceGraphPreview';

export interface EditorPanelProps {
  /** The YAML being edited (unsaved, possibly invalid). */
  source: string;
  namespace?: string;
  flowId?: string;
}
export interface EditorPanel { id: string; label: string; component: ComponentType<EditorPanelProps> }

export const EDITOR_PANELS: EditorPanel[] = [
  { id: 'graph', label: 'Graph preview', component: SourceGraphPreview },
];
