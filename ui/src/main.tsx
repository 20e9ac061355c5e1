// Entry point of the web UI: the router over the route table (routes.tsx), under the /ui base the server serves.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createBrowserRouter, RouterProvider } from 'react-router';
import { routes } from './routes';
import './styles.css';

const router = createBrowserRouter(routes, { basename: '/ui' });

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <RouterProvider router={router} />
  </StrictMode>,
);
