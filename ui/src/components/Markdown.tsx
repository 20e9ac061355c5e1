// Markdown from flows (descriptions) rendered safely: markdown-it with raw HTML off (tags appear as text), then
// DOMPurify over the result, links opening in a new tab without access to this one.
import DOMPurify from 'dompurify';
import MarkdownIt from 'markdown-it';
import { useMemo } from 'react';

const md = new MarkdownIt({ html: false, linkify: true, breaks: false });

/** The sanitized HTML of `source`. */
export function renderMarkdown(source: string): string {
  const html = md.render(source);
  const clean = DOMPurify.sanitize(html, { USE_PROFILES: { html: true }, FORBID_TAGS: ['style', 'form', 'input'], FORBID_ATTR: ['style'] });
  return clean.replace(/<a /g, '<a target="_blank" rel="noopener noreferrer" ');
}

export function Markdown({ source, className }: { source: string; className?: string }) {
  const html = useMemo(() => renderMarkdown(source), [source]);
  return <div className={`markdown ${className ?? ''}`} dangerouslySetInnerHTML={{ __html: html }} />;
}
