// The messages a framed page posts with its height (Canvas's and Sakai's, and this site's own),
// shared by the explorer (embed.js) and the playground: one protocol for every page of the site.

/** The messages for a content height of `height` CSS pixels. */
export const resizeMessages = (height) => [
  { subject: 'lti.frameResize', height },
  { type: 'attention-explorer:resize', height },
];

/**
 * Posts the page's content height to the parent now and whenever it changes. The body's own
 * height, not the document's scroll height, which never drops below the frame's height and so
 * would never let the frame shrink.
 */
export function postHeight() {
  let last = -1;
  const post = () => {
    const height = Math.ceil(document.body.getBoundingClientRect().height);
    if (height === last) return;
    last = height;
    // Only a height leaves the page, so any parent origin may read it.
    for (const message of resizeMessages(height)) window.parent.postMessage(message, '*');
  };
  new ResizeObserver(post).observe(document.body);
  post();
}
